//! Register tiles: `let t = tile_acc();` (or `tile_a()`, `tile_b()`) declarations and the
//! `tile_*` statements (docs/DSL.md, "Register tiles").

use super::stmt::is_call_to;
use super::{err, Lowerer, Name};
use onekernel_dsl::ir::{ExprKind, Place, Stmt, StmtKind, TileDecl, TileId, TileOp, TileReduce, TileRole, VarId};
use onekernel_dsl::types::{Literal, Scalar};
use proc_macro2::Span;
use syn::spanned::Spanned;

/// The longest tile array (each tile is a register set of every group of 32 invocations).
pub(super) const MAX_TILE_ARRAY: u32 = 64;

/// The statements that operate on tiles.
const OPERATIONS: [&str; 13] = [
    "tile_fill",
    "tile_load",
    "tile_store",
    "tile_mma",
    "tile_scale",
    "tile_get",
    "tile_set",
    "tile_coords",
    "tile_row_max",
    "tile_row_sum",
    "tile_all_max",
    "tile_mma_panel",
    "tile_mma_wait",
];

/// The reduction a statement's name calls for, if it is one.
fn reduction(name: &str) -> Option<TileReduce> {
    [TileReduce::RowMax, TileReduce::RowSum, TileReduce::AllMax].into_iter().find(|r| r.name() == name)
}

/// The role a `let` initializer declares, if it is a tile constructor.
pub(super) fn constructor(e: &syn::Expr) -> Option<TileRole> {
    [TileRole::A, TileRole::B, TileRole::Acc].into_iter().find(|r| is_call_to(e, r.constructor()))
}

/// Whether a statement expression is a tile operation.
pub(super) fn is_operation(e: &syn::Expr) -> bool {
    OPERATIONS.iter().any(|n| is_call_to(e, n))
}

impl Lowerer {
    /// `let t = tile_acc();`: a tile of each group of 32 invocations, declared at the
    /// kernel's top level (its registers live for the whole kernel).
    pub(super) fn tile_decl(&mut self, name: &str, role: TileRole, value: &syn::Expr, mutable: bool, span: Span) -> syn::Result<()> {
        self.check_tile_let(value, mutable, span, format!("let {name} = {}()", role.constructor()))?;
        self.check_tile_identifier(name, span)?;
        let span = self.span_id(span);
        self.declare_tile(TileDecl { name: name.to_string(), role, span });
        Ok(())
    }

    /// `let o = [tile_acc(); N];`: N tiles of one role, used as `o[i]` with `i` a literal
    /// or the counter of a `for` loop over literal bounds (which the macro unrolls:
    /// docs/DSL.md, "Tile arrays").
    pub(super) fn tile_array_decl(&mut self, name: &str, role: TileRole, r: &syn::ExprRepeat, mutable: bool, span: Span) -> syn::Result<()> {
        self.check_tile_let(&r.expr, mutable, span, format!("let {name} = [{}(); N]", role.constructor()))?;
        let len = match &*r.len {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse::<u32>().ok().filter(|n| (1..=MAX_TILE_ARRAY).contains(n)),
            _ => None,
        };
        let Some(len) = len else {
            return Err(err(r.len.span(), format!("a tile array's length is an integer literal from 1 to {MAX_TILE_ARRAY}")));
        };
        for i in 0..len {
            self.check_tile_identifier(&format!("{name}[{i}]"), span)?;
        }
        let span = self.span_id(span);
        self.declare_tile_array(name, role, len, span);
        Ok(())
    }

    /// What every tile declaration (`written`, as it should read) must be: at the top
    /// level, without `mut`, its constructor call `ctor` without arguments.
    fn check_tile_let(&self, ctor: &syn::Expr, mutable: bool, span: Span, written: String) -> syn::Result<()> {
        if self.depth != 0 || !self.inlining.is_empty() {
            return Err(err(span, "tiles are declared at the top level of the kernel body"));
        }
        if mutable {
            return Err(err(span, format!("write `{written};` (no `mut`): the `tile_*` operations write tiles")));
        }
        if let syn::Expr::Call(c) = ctor {
            if !c.args.is_empty() {
                let f = quote::ToTokens::to_token_stream(&c.func).to_string();
                return Err(err(c.args.span(), format!("`{f}()` takes no arguments: every tile is 16 × 16")));
            }
        }
        Ok(())
    }

    /// Tiles become identifiers in the generated code with their brackets dropped
    /// (`o[3]` as `o3`), so a tile and an array element may not meet there.
    fn check_tile_identifier(&self, name: &str, span: Span) -> syn::Result<()> {
        let ident = onekernel_dsl::ir::tile_identifier;
        match self.tiles.iter().find(|t| ident(&t.name) == ident(name)) {
            Some(t) => Err(err(span, format!("tile `{name}` would share its name in the generated code with tile `{}`; rename one", t.name))),
            None => Ok(()),
        }
    }

    /// One of the `tile_*` statements.
    pub(super) fn tile_op(&mut self, c: &syn::ExprCall, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let syn::Expr::Path(p) = &*c.func else { return Err(err(c.span(), "a tile operation is called by name")) };
        let name = p.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let args = c.args.iter().collect::<Vec<_>>();
        let op = match (name.as_str(), &args[..]) {
            ("tile_fill", [t, v]) => TileOp::Fill { tile: self.tile(t, &name)?, value: self.f32_operand(v, &name)? },
            ("tile_scale", [t, v]) => TileOp::Scale { tile: self.tile(t, &name)?, value: self.f32_operand(v, &name)? },
            ("tile_mma", [acc, a, b]) => TileOp::Mma { acc: self.tile(acc, &name)?, a: self.tile(a, &name)?, b: self.tile(b, &name)? },
            ("tile_load", [t, src, index, stride, col_major]) => TileOp::Load {
                tile: self.tile(t, &name)?,
                src: self.tile_memory(src, &name)?,
                index: self.index_u32(index, &name)?,
                stride: self.index_u32(stride, &name)?,
                col_major: bool_literal(col_major, &name)?,
            },
            ("tile_store", [t, dst, index, stride, col_major]) => TileOp::Store {
                tile: self.tile(t, &name)?,
                dst: self.tile_memory(dst, &name)?,
                index: self.index_u32(index, &name)?,
                stride: self.index_u32(stride, &name)?,
                col_major: bool_literal(col_major, &name)?,
            },
            ("tile_get", [vals, t, scratch, index, stride]) => TileOp::Get {
                vals: self.slot_array(vals, &name)?,
                tile: self.tile(t, &name)?,
                scratch: self.tile_scratch(scratch, &name)?,
                index: self.index_u32(index, &name)?,
                stride: self.index_u32(stride, &name)?,
            },
            ("tile_set", [t, vals, scratch, index, stride]) => TileOp::Set {
                tile: self.tile(t, &name)?,
                vals: self.slot_array(vals, &name)?,
                scratch: self.tile_scratch(scratch, &name)?,
                index: self.index_u32(index, &name)?,
                stride: self.index_u32(stride, &name)?,
            },
            // Four accumulators (64 columns) or eight (128), then the same seven operands.
            ("tile_mma_panel", all) if all.len() == 11 || all.len() == 15 => {
                let (accs, rest) = all.split_at(all.len() - 7);
                let &[a, panel, base, rows, row0, col0, by_rows] = rest else { return Err(err(c.span(), usage(&name))) };
                TileOp::PanelMma {
                    accs: accs.iter().map(|c| self.tile(c, &name)).collect::<syn::Result<_>>()?,
                    a: self.tile(a, &name)?,
                    panel: self.tile_panel(panel, &name)?,
                    base: self.index_u32(base, &name)?,
                    rows: self.index_u32(rows, &name)?,
                    row0: self.index_u32(row0, &name)?,
                    col0: self.index_u32(col0, &name)?,
                    by_rows: flag_literal(by_rows, &name, "by_rows")?,
                }
            }
            ("tile_mma_wait", []) => TileOp::PanelWait,
            ("tile_coords", [rows, cols]) => TileOp::Coords { rows: self.slot_array(rows, &name)?, cols: self.slot_array(cols, &name)? },
            (n, [vals]) => match reduction(n) {
                Some(op) => TileOp::Reduce { vals: self.slot_array(vals, &name)?, op },
                None => return Err(err(c.span(), usage(&name))),
            },
            _ => return Err(err(c.span(), usage(&name))),
        };
        self.push(out, StmtKind::Tile(Box::new(op)), c.span());
        Ok(())
    }

    /// A tile named by an operation's argument: a tile, or an element `o[i]` of a tile
    /// array with `i` a literal or an unrolled loop's counter.
    fn tile(&self, e: &syn::Expr, op: &str) -> syn::Result<TileId> {
        if let syn::Expr::Index(ix) = e {
            return self.tile_element(ix, op);
        }
        let syn::Expr::Path(p) = e else { return Err(err(e.span(), format!("`{op}` takes tiles by name"))) };
        let name = p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
        match self.lookup(&name) {
            Some(Name::Tile(t)) => Ok(t),
            Some(Name::TileArray { .. }) => Err(err(e.span(), format!("`{op}` takes one tile; name an element of the tile array: `{name}[i]`"))),
            Some(_) => Err(err(e.span(), format!("`{name}` is not a tile; declare one with `let {name} = tile_acc();` (or `tile_a()`, `tile_b()`)"))),
            None => Err(err(e.span(), format!("cannot find tile `{name}` in this kernel"))),
        }
    }

    /// `o[i]`: the element of tile array `o` that `i` selects where the macro knows it.
    fn tile_element(&self, ix: &syn::ExprIndex, op: &str) -> syn::Result<TileId> {
        let syn::Expr::Path(p) = &*ix.expr else { return Err(err(ix.expr.span(), format!("`{op}` takes tiles by name"))) };
        let name = p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
        let Some(Name::TileArray { first, len }) = self.lookup(&name) else {
            return Err(err(ix.span(), format!("`{name}` is not a tile array; declare one with `let {name} = [tile_acc(); N];`")));
        };
        let i = self.known_index(&ix.index).ok_or_else(|| {
            err(
                ix.index.span(),
                format!("tile array `{name}` is indexed by integer literals and the counters of `for` loops over literal bounds, with `+ - * / %` (the macro unrolls those loops: tiles are registers)"),
            )
        })?;
        if i >= u64::from(len) {
            return Err(err(ix.index.span(), format!("index {i} is past the end of tile array `{name}` ({len} tiles)")));
        }
        Ok(TileId(first.0 + i as u32))
    }

    /// The value of an index the macro knows: an integer literal, an unrolled loop's
    /// counter, or `+ − × / %` of those.
    fn known_index(&self, e: &syn::Expr) -> Option<u64> {
        match e {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse().ok(),
            syn::Expr::Paren(p) => self.known_index(&p.expr),
            // Arithmetic on those (`o[2 * j + 1]`), in u64: a result past the array is
            // reported as such, and no operation here wraps for indices of 64 tiles.
            syn::Expr::Binary(b) => {
                let (l, r) = (self.known_index(&b.left)?, self.known_index(&b.right)?);
                match b.op {
                    syn::BinOp::Add(_) => l.checked_add(r),
                    syn::BinOp::Sub(_) => l.checked_sub(r),
                    syn::BinOp::Mul(_) => l.checked_mul(r),
                    syn::BinOp::Div(_) => l.checked_div(r),
                    syn::BinOp::Rem(_) => l.checked_rem(r),
                    _ => None,
                }
            }
            syn::Expr::Path(p) => {
                let name = p.path.get_ident()?.to_string();
                let Some(Name::Counter(k)) = self.lookup(&name) else { return None };
                u64::try_from(int_literal_value(self.substitutions.get(k as usize)?)?).ok()
            }
            _ => None,
        }
    }

    /// The shared array or buffer a tile moves from or to.
    fn tile_memory(&mut self, e: &syn::Expr, op: &str) -> syn::Result<Place> {
        match self.place(e)? {
            Place::Local(_) => Err(err(e.span(), format!("`{op}` moves tiles between registers and a shared array or a buffer, not a local array"))),
            p => Ok(p),
        }
    }

    /// The shared array a `tile_mma_panel` reads its panel from.
    fn tile_panel(&mut self, e: &syn::Expr, op: &str) -> syn::Result<Place> {
        match self.place(e)? {
            p @ Place::Shared(_) => Ok(p),
            _ => Err(err(e.span(), format!("`{op}` reads its panel from a shared array"))),
        }
    }

    /// A local array of slots (`tile_get`, `tile_set`, `tile_coords`, the reductions);
    /// its element type and length are checked with the kernel's types.
    fn slot_array(&mut self, e: &syn::Expr, op: &str) -> syn::Result<VarId> {
        match self.place(e)? {
            Place::Local(v) => Ok(v),
            _ => Err(err(e.span(), format!("`{op}` takes a local array of 8 slots, such as `let mut vals = [0.0; 8];`"))),
        }
    }

    /// The shared array a `tile_get` or `tile_set` goes through where a backend cannot
    /// reach a tile's registers.
    fn tile_scratch(&mut self, e: &syn::Expr, op: &str) -> syn::Result<Place> {
        match self.place(e)? {
            p @ Place::Shared(_) => Ok(p),
            _ => Err(err(e.span(), format!("`{op}`'s scratch is a shared array"))),
        }
    }

    fn f32_operand(&mut self, e: &syn::Expr, op: &str) -> syn::Result<onekernel_dsl::ir::Expr> {
        let v = self.expr(e, Some(Scalar::F32))?;
        if v.ty != Scalar::F32 {
            return Err(err(e.span(), format!("`{op}` takes an f32 value, found {}", v.ty)));
        }
        Ok(v)
    }
}

/// The value of an integer literal of the IR (u32 or i32).
pub(super) fn int_literal_value(e: &onekernel_dsl::ir::Expr) -> Option<i64> {
    match e.kind {
        ExprKind::Lit(Literal::U32(v)) => Some(i64::from(v)),
        ExprKind::Lit(Literal::I32(v)) => Some(i64::from(v)),
        _ => None,
    }
}

fn bool_literal(e: &syn::Expr, op: &str) -> syn::Result<bool> {
    flag_literal(e, op, "col_major")
}

/// A flag argument, which selects the instruction: `true` or `false` as written.
fn flag_literal(e: &syn::Expr, op: &str, flag: &str) -> syn::Result<bool> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Bool(v), .. }) => Ok(v.value),
        _ => Err(err(e.span(), format!("`{op}`'s `{flag}` is `true` or `false`"))),
    }
}

/// How each operation is called.
fn usage(op: &str) -> String {
    match op {
        "tile_fill" => "`tile_fill(acc, value)` sets every accumulator of a `tile_acc()` to an f32 value".into(),
        "tile_scale" => "`tile_scale(acc, value)` multiplies every accumulator of a `tile_acc()` by an f32 value".into(),
        "tile_mma" => "`tile_mma(acc, a, b)` adds the product of a `tile_a()` and a `tile_b()` to a `tile_acc()`".into(),
        "tile_load" => "`tile_load(tile, src, index, stride, col_major)` loads a tile from a shared array or a read-only buffer".into(),
        "tile_store" => "`tile_store(acc, dst, index, stride, col_major)` stores a `tile_acc()` into a shared array or a writable buffer of f32".into(),
        "tile_get" => "`tile_get(vals, acc, scratch, index, stride)` copies this invocation's 8 values of a `tile_acc()` into a local f32 array (through a shared f32 scratch where a backend must)".into(),
        "tile_set" => "`tile_set(tile, vals, scratch, index, stride)` sets this invocation's 8 values of a `tile_acc()` or `tile_a()` from a local f32 array (through a shared scratch where a backend must)".into(),
        "tile_mma_panel" => "`tile_mma_panel(c0, c1, c2, c3, a, panel, base, rows, row0, col0, by_rows)` adds a `tile_a()` times 64 columns of a shared panel to four `tile_acc()`s (with eight, `c0 … c7`, 128 columns)".into(),
        "tile_mma_wait" => "`tile_mma_wait()` completes the `tile_mma_panel`s before it; it takes no arguments".into(),
        "tile_coords" => "`tile_coords(rows, cols)` gives the row and column of each of this invocation's 8 slots, into two local u32 arrays".into(),
        _ => format!("`{op}(vals)` combines a local f32 array of 8 slots over the group's invocations, in place"),
    }
}
