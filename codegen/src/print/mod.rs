//! The one IR printer: kernel bodies and library functions for every backend, spelled
//! through a [`Dialect`]. Semantics that C-like languages leave open are pinned down
//! here the same way for all three targets:
//!
//! * every intrinsic is a call to an `ok_*` helper whose definition (in each backend's
//!   template) spells out the DSL meaning (`min` = `a < b ? a : b`, exact f16 packing…);
//! * `for` loops end when the counter would overflow, exactly like the interpreter;
//! * workgroup reductions expand to the stride-halving tree in shared scratch memory,
//!   with barriers, so the pairing is the same whatever the subgroup size;
//! * i32 arithmetic wraps (through unsigned arithmetic where the language needs it);
//! * identifiers that are reserved in any target get a trailing `_`.

mod names;

pub use names::ident;

use crate::analysis::KernelInfo;
use crate::dialect::{CopyText, Dialect, FieldText};
use onekernel_dsl::ir::{
    ArrayInit, BinaryOp, Builtin, Expr, ExprKind, Function, Init, Intrinsic, Kernel, LocalDecl, ParamId, ParamKind, Place, ReduceOp, Stmt, StmtKind,
    TileOp, UnaryOp, VarId,
};
use onekernel_dsl::types::{Literal, Scalar, VarType};
use std::fmt::Write;

/// Prints statements and expressions of one kernel.
/// Loops with literal bounds longer than this are left rolled (code size, compile time).
pub const MAX_UNROLLED_TRIPS: i64 = 16;

/// The value of an integer literal.
fn literal_int(l: &Literal) -> Option<i64> {
    match l {
        Literal::U32(v) => Some(*v as i64),
        Literal::I32(v) => Some(*v as i64),
        _ => None,
    }
}

pub struct Printer<'a> {
    d: &'a dyn Dialect,
    k: &'a Kernel,
    locals: &'a [LocalDecl],
    /// Shared arrays the dialect declares as f16 pairs ([`Dialect::halves_type`]).
    halves: &'a std::collections::BTreeSet<usize>,
    out: String,
    indent: usize,
    last_line: u32,
    /// Shared arrays the group may have written since its last barrier or warp fence
    /// where the statement being printed runs: a tile load from one of them is fenced
    /// first ([`TileMemory::fence`](crate::dialect::TileMemory)), one from any other
    /// array is not (a fence there would only keep the compiler from overlapping the
    /// load with earlier work).
    dirty: std::collections::BTreeSet<u32>,
    /// The kernel reads panels (`tile_mma_panel`): its barriers are the dialect's
    /// [`Dialect::panel_barrier`].
    panels: bool,
}

impl<'a> Printer<'a> {
    /// A printer for `k` (whose facts are `info`) in dialect `d`, starting at `indent`
    /// levels.
    pub fn new(d: &'a dyn Dialect, k: &'a Kernel, info: &'a KernelInfo, indent: usize) -> Self {
        // Tile operand arrays are f16 pairs only where the dialect has such a type.
        let halves = if d.halves_type().is_some() { &info.tile_operand_shared } else { &NO_ARRAYS };
        let panels = !info.panel_shared.is_empty();
        Printer { d, k, locals: &k.locals, halves, out: String::new(), indent, last_line: 0, dirty: Default::default(), panels }
    }

    /// The kernel body.
    pub fn body(mut self) -> String {
        let k = self.k;
        for t in &k.tiles {
            let decl = self.d.tile_decl(t.role, &tile_name(&t.name));
            self.line(&format!("{decl};"));
        }
        self.block(&k.body);
        self.out
    }

    /// A library function's definition.
    pub fn function(d: &'a dyn Dialect, k: &'a Kernel, f: &'a Function) -> String {
        let mut p = Printer {
            d,
            k,
            locals: &f.locals,
            halves: &NO_ARRAYS,
            out: String::new(),
            indent: 1,
            last_line: 0,
            dirty: Default::default(),
            panels: false,
        };
        let params: Vec<String> = f.params.iter().enumerate().map(|(i, t)| format!("{} {}", d.scalar(*t), p.local(VarId(i as u32)))).collect();
        let mut head = String::new();
        for line in f.doc.lines() {
            let _ = writeln!(head, "// {line}");
        }
        let _ = writeln!(head, "{}{} ok_{}({}) {{", d.function_prefix(), d.scalar(f.ret), f.name, params.join(", "));
        p.out = head;
        for s in &f.body {
            p.stmt(s);
        }
        let result = p.expr(&f.result);
        p.line(&format!("return {result};"));
        p.out.push_str("}\n");
        p.out
    }

    fn line(&mut self, s: &str) {
        for _ in 0..self.indent {
            self.out.push_str("    ");
        }
        self.out.push_str(s);
        self.out.push('\n');
    }

    fn local(&self, v: VarId) -> String {
        let name = self.locals.get(v.0 as usize).map(|l| l.name.as_str()).unwrap_or("v");
        format!("{name}_{}", v.0)
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn nested(&mut self, head: &str, body: &[Stmt]) {
        self.line(&format!("{head} {{"));
        self.indent += 1;
        self.block(body);
        self.indent -= 1;
    }

    fn source_comment(&mut self, s: &Stmt) {
        if let Some(loc) = self.k.loc(s.span) {
            if loc.line != self.last_line && self.locals.as_ptr() == self.k.locals.as_ptr() {
                self.last_line = loc.line;
                self.line(&format!("// line {}", loc.line));
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        self.source_comment(s);
        match &s.kind {
            StmtKind::Let { var, init } => self.let_stmt(*var, init.as_ref()),
            StmtKind::Assign { var, value } => {
                let e = self.expr(value);
                let name = self.local(*var);
                self.line(&format!("{name} = {e};"));
            }
            StmtKind::Store { place, index, value } => {
                let i = self.expr(index);
                let v = self.expr(value);
                let text = match place {
                    Place::Buffer(p) => {
                        let param = &self.k.params[p.0 as usize];
                        let ParamKind::Buffer { elem, .. } = param.kind else { return };
                        self.d.buffer_store(&ident(&param.name), elem, &i, &v)
                    }
                    Place::Local(l) => format!("{}[{i}] = {v}", self.local(*l)),
                    Place::Shared(sh) if self.halves.contains(&(sh.0 as usize)) => {
                        self.dirty.insert(sh.0);
                        format!("{}[{i}] = {}", shared_name(&self.k.shared[sh.0 as usize].name), self.d.halves_from_word(&v))
                    }
                    Place::Shared(sh) => {
                        self.dirty.insert(sh.0);
                        format!("{}[{i}] = {v}", shared_name(&self.k.shared[sh.0 as usize].name))
                    }
                };
                self.line(&format!("{text};"));
            }
            StmtKind::If { cond, then_body, else_body } => {
                let c = self.expr(cond);
                let before = self.dirty.clone();
                self.nested(&format!("if ({c})"), then_body);
                let then_dirty = std::mem::replace(&mut self.dirty, before);
                if else_body.is_empty() {
                    self.line("}");
                } else {
                    self.nested("} else", else_body);
                    self.line("}");
                }
                self.dirty.extend(then_dirty);
            }
            StmtKind::For { var, start, end, step, body, peel } => {
                // Each trip may start with what any trip wrote; after the loop, likewise.
                shared_writes(body, &mut self.dirty);
                let head = self.dirty.clone();
                self.for_loop(*var, start, end, step, body, *peel);
                self.dirty = head;
            }
            StmtKind::While { cond, body } => {
                shared_writes(body, &mut self.dirty);
                let head = self.dirty.clone();
                let c = self.expr(cond);
                self.nested(&format!("while ({c})"), body);
                self.line("}");
                self.dirty = head;
            }
            StmtKind::Break => self.line("break;"),
            StmtKind::Continue => self.line("continue;"),
            StmtKind::Return => self.line("return;"),
            StmtKind::Barrier => {
                self.dirty.clear();
                let barrier = if self.panels { self.d.panel_barrier() } else { self.d.barrier() };
                self.line(&format!("{barrier};"))
            }
            StmtKind::Arrive { var, counters, index, count } => {
                let buf = ident(&self.k.params[counters.0 as usize].name);
                let counter = self.d.buffer_element(&buf, &self.expr(index));
                let count = self.expr(count);
                let name = self.local(*var);
                self.line("// last_arrival: the workgroup's buffer writes released, one arrival per workgroup");
                for l in self.d.arrive(&counter, &count, &name) {
                    self.line(&l);
                }
                self.dirty.clear();
            }
            StmtKind::Reduce { var, op, value, arg: None } => {
                self.reduce(*var, *op, value);
                self.dirty.clear();
            }
            StmtKind::Reduce { var, op, value, arg: Some(a) } => {
                self.reduce_pair(*var, *op, value, a);
                self.dirty.clear();
            }
            StmtKind::AsyncCopy { dst, dst_index, src, src_index, words, .. } if self.halves.contains(&(dst.0 as usize)) => {
                // Into f16 pairs: each word converted (the dialect has no asynchronous
                // copies where it declares such arrays), read as one aligned vector.
                let sh = shared_name(&self.k.shared[dst.0 as usize].name);
                let buf = ident(&self.k.params[src.0 as usize].name);
                let (di, si) = (self.expr(dst_index), self.expr(src_index));
                let line = if *words == 1 {
                    format!("{sh}[{di}] = {};", self.d.halves_from_word(&self.d.buffer_element(&buf, &si)))
                } else {
                    let elem = self.buffer_scalar(*src);
                    let load = self.d.word_load(&buf, &si, elem, *words);
                    self.d.unpack_words_as(&sh, &di, &load, elem, *words, &|w| self.d.halves_from_word(w))
                };
                self.line(&line);
            }
            StmtKind::AsyncCopy { dst, dst_index, src, src_index, words, bypass_l1 } => {
                let sh = shared_name(&self.k.shared[dst.0 as usize].name);
                let buf = ident(&self.k.params[src.0 as usize].name);
                let (di, si) = (self.expr(dst_index), self.expr(src_index));
                let elem = self.buffer_scalar(*src);
                let copy = CopyText { dst: &sh, dst_index: &di, src: &buf, src_index: &si, elem, words: *words, bypass_l1: *bypass_l1 };
                for line in self.d.async_copy(&copy) {
                    self.line(&line);
                }
            }
            StmtKind::LoadWords { dst, dst_index, src, src_index, words } => self.load_words(*dst, dst_index, src, src_index, *words),
            StmtKind::StoreWords { dst, dst_index, src, src_index, words } => {
                let (di, si) = (self.expr(dst_index), self.expr(src_index));
                let param = &self.k.params[dst.0 as usize];
                let ParamKind::Buffer { elem, .. } = param.kind else { return };
                let line = self.d.store_words(&ident(&param.name), elem, &di, &self.local(*src), &si, *words);
                self.line(&line);
            }
            StmtKind::Tile(t) => self.tile(t),
            StmtKind::AsyncCommit => {
                if let Some(line) = self.d.async_commit() {
                    self.line(line);
                }
            }
            StmtKind::AsyncWait { pending } => {
                if let Some(line) = self.d.async_wait(*pending) {
                    self.line(&line);
                }
            }
        }
    }

    /// A local's declaration, with its initial value or fill.
    fn let_stmt(&mut self, var: VarId, init: Option<&Init>) {
        let name = self.local(var);
        match (self.locals[var.0 as usize].ty, init) {
            (VarType::Scalar(t), Some(Init::Value(e))) => {
                let e = self.expr(e);
                self.line(&format!("{}{} {name} = {e};", self.d.local_prefix(t), self.d.scalar(t)));
            }
            (VarType::Scalar(t), _) => self.line(&format!("{}{} {name};", self.d.local_prefix(t), self.d.scalar(t))),
            (VarType::Array { elem, len }, Some(Init::Array(ArrayInit::Elements(es)))) => {
                let es: Vec<String> = es.iter().map(|e| self.expr(e)).collect();
                let decl = self.d.array_decl(elem, &name, len, &es);
                self.line(&format!("{decl};"));
            }
            (VarType::Array { elem, len }, Some(Init::Array(ArrayInit::Fill(e)))) => {
                let t = self.d.scalar(elem);
                let fill = self.expr(e);
                let u = self.d.scalar(Scalar::U32);
                self.line(&format!("{t} {name}[{len}];"));
                self.line(&format!("for ({u} ok_i = 0u; ok_i < {len}u; ok_i++) {{ {name}[ok_i] = {fill}; }}"));
            }
            (VarType::Array { elem, len }, _) => {
                let t = self.d.scalar(elem);
                self.line(&format!("{t} {name}[{len}];"));
            }
        }
    }

    /// A counted loop: its bounds evaluated once, the overflow-free step rule, the single-trip peel and the unroll hint.
    fn for_loop(&mut self, var: VarId, start: &Expr, end: &Expr, step: &Expr, body: &[Stmt], peel: bool) {
        let ty = start.ty;
        let t = self.d.scalar(ty);
        let name = self.local(var);
        let (mut s, e) = (self.expr(start), self.expr(end));
        let unit_step = step.is_one();
        self.line("{");
        self.indent += 1;
        self.line(&format!("const {t} ok_end_{} = {e};", var.0));
        if peel {
            // `#[peel_single_trip]`: one trip is the body without a loop (the
            // condition is a constant once the variant is fixed, so compilers keep
            // one branch); `end - 1` cannot overflow where start < end.
            self.line(&format!("const {t} ok_start_{} = {s};", var.0));
            s = format!("ok_start_{}", var.0);
            let one = if ty == Scalar::I32 { self.d.int_literal(1) } else { self.d.uint_literal(1) };
            self.line(&format!("if ({s} < ok_end_{v} && ok_end_{v} - {one} == {s}) {{", v = var.0));
            self.indent += 1;
            self.line(&format!("const {t} {name} = {s};"));
            self.block(body);
            self.indent -= 1;
            self.line("} else {");
            self.indent += 1;
        }
        let advance = if unit_step {
            // i < end ≤ MAX, so i + 1 cannot overflow.
            format!("{name}++")
        } else {
            let st = self.expr(step);
            self.line(&format!("const {t} ok_step_{} = {st};", var.0));
            // End where the next value would reach `end` or overflow (the
            // interpreter's rule); the difference is taken unsigned, i < end.
            let u = |x: &str| self.d.cast(ty, Scalar::U32, x);
            format!(
                "{name} = ({} >= {} - {}) ? ok_end_{v} : {name} + ok_step_{v}",
                u(&format!("ok_step_{}", var.0)),
                u(&format!("ok_end_{}", var.0)),
                u(&name),
                v = var.0
            )
        };
        if unit_step && self.unrollable(start, end) {
            if let Some(hint) = self.d.unroll_hint() {
                self.line(hint);
            }
        }
        self.nested(&format!("for ({t} {name} = {s}; {name} < ok_end_{}; {advance})", var.0), body);
        self.line("}");
        if peel {
            self.indent -= 1;
            self.line("}");
        }
        self.indent -= 1;
        self.line("}");
    }

    /// `load_words`: words of a buffer or shared array into a local array.
    fn load_words(&mut self, dst: VarId, dst_index: &Expr, src: &Place, src_index: &Expr, words: u32) {
        let arr = self.local(dst);
        let (di, si) = (self.expr(dst_index), self.expr(src_index));
        let line = match src {
            Place::Shared(sh) if self.halves.contains(&(sh.0 as usize)) => {
                let name = shared_name(&self.k.shared[sh.0 as usize].name);
                let u = self.d.scalar(Scalar::U32);
                let mut body = format!("{{ const {u} ok_ld = {di}; const {u} ok_ls = {si};");
                for w in 0..words {
                    body.push_str(&format!(" {arr}[ok_ld + {w}u] = {};", self.d.word_from_halves(&format!("{name}[ok_ls + {w}u]"))));
                }
                body.push_str(" }");
                body
            }
            Place::Shared(sh) => {
                let shared = &self.k.shared[sh.0 as usize];
                self.d.load_shared_words(&arr, &di, &shared_name(&shared.name), &si, shared.elem, words)
            }
            // Validation rejects local sources.
            Place::Local(_) => return,
            Place::Buffer(p) => {
                let elem = self.buffer_scalar(*p);
                self.d.load_words(&arr, &di, &ident(&self.k.params[p.0 as usize].name), &si, elem, words)
            }
        };
        self.line(&line);
    }

    /// The scalar type of buffer parameter `p`'s elements as the dialect reads them.
    fn buffer_scalar(&self, p: ParamId) -> Scalar {
        match &self.k.params[p.0 as usize].kind {
            ParamKind::Buffer { elem, .. } => elem.value_type(),
            _ => Scalar::U32,
        }
    }

    /// A tile operation: its operands printed, the dialect's lines.
    fn tile(&mut self, t: &TileOp) {
        let name = |id: onekernel_dsl::ir::TileId| tile_name(&self.k.tiles[id.0 as usize].name);
        let lines = match t {
            TileOp::Fill { tile, value } => self.d.tile_fill(&name(*tile), &self.expr(value), false),
            TileOp::Scale { tile, value } => self.d.tile_fill(&name(*tile), &self.expr(value), true),
            TileOp::Mma { acc, a, b } => self.d.tile_mma(&name(*acc), &name(*a), &name(*b)),
            TileOp::Load { tile, src, index, stride, col_major } => {
                let mut m = self.tile_memory(*src, index, stride, *col_major);
                m.fence = matches!(src, Place::Shared(s) if self.dirty.contains(&s.0));
                if m.fence {
                    self.dirty.clear();
                }
                self.d.tile_load(self.k.tiles[tile.0 as usize].role, &name(*tile), &m)
            }
            TileOp::Store { tile, dst, index, stride, col_major } => {
                let m = self.tile_memory(*dst, index, stride, *col_major);
                if m.shared {
                    // Fenced before and after by the dialect.
                    self.dirty.clear();
                }
                self.d.tile_store(&name(*tile), &m)
            }
            // Dialects that go through the scratch fence their own accesses to it.
            TileOp::Get { vals, tile, scratch, index, stride } => {
                let m = self.tile_memory(*scratch, index, stride, false);
                self.d.tile_get(&self.local(*vals), &name(*tile), &m)
            }
            TileOp::Set { tile, vals, scratch, index, stride } => {
                let m = self.tile_memory(*scratch, index, stride, false);
                self.d.tile_set(self.k.tiles[tile.0 as usize].role, &name(*tile), &self.local(*vals), &m)
            }
            TileOp::Coords { rows, cols } => self.d.tile_coords(&self.local(*rows), &self.local(*cols)),
            TileOp::Reduce { vals, op } => self.d.tile_reduce(&self.local(*vals), *op),
            TileOp::PanelMma { accs, a, panel, base, rows, row0, col0, by_rows } => {
                let Place::Shared(sh) = panel else { return };
                let fence = self.dirty.contains(&sh.0);
                if fence {
                    self.dirty.clear();
                }
                let p = crate::dialect::PanelMma {
                    accs: accs.iter().map(|t| name(*t)).collect(),
                    a: name(*a),
                    array: shared_name(&self.k.shared[sh.0 as usize].name),
                    base: self.expr(base),
                    rows: self.expr(rows),
                    row0: self.expr(row0),
                    col0: self.expr(col0),
                    by_rows: *by_rows,
                    fence,
                };
                self.d.tile_mma_panel(&p)
            }
            TileOp::PanelWait => {
                let tiles: Vec<_> = self.k.tiles.iter().map(|t| (t.role, tile_name(&t.name))).collect();
                self.d.tile_mma_wait(&tiles)
            }
        };
        for line in lines {
            self.line(&line);
        }
    }

    /// The memory operands of a tile load or store, printed.
    fn tile_memory(&self, place: Place, index: &Expr, stride: &Expr, col_major: bool) -> crate::dialect::TileMemory {
        let (array, shared, read_only) = match place {
            Place::Shared(s) => (shared_name(&self.k.shared[s.0 as usize].name), true, false),
            Place::Buffer(p) => {
                let param = &self.k.params[p.0 as usize];
                let read_only = matches!(param.kind, ParamKind::Buffer { access: onekernel_dsl::ir::Access::ReadOnly, .. });
                (ident(&param.name), false, read_only)
            }
            Place::Local(l) => (self.local(l), false, false),
        };
        crate::dialect::TileMemory { array, shared, read_only, index: self.expr(index), stride: self.expr(stride), col_major, fence: false }
    }

    /// Whether a unit-step loop is marked for unrolling: both bounds are known when the
    /// kernel is compiled (literals, spec constants, the workgroup size, and pure
    /// arithmetic on them) and, where they are literals, it runs at most
    /// [`MAX_UNROLLED_TRIPS`] times. Unrolled, such loops index local arrays with
    /// constants, which keeps the arrays in registers on every backend's compiler.
    fn unrollable(&self, start: &Expr, end: &Expr) -> bool {
        let trips = match (&start.kind, &end.kind) {
            (ExprKind::Lit(a), ExprKind::Lit(b)) => literal_int(a).zip(literal_int(b)).map(|(a, b)| b - a),
            _ => None,
        };
        self.compile_time(start) && self.compile_time(end) && trips.is_none_or(|n| n <= MAX_UNROLLED_TRIPS)
    }

    /// Whether `e`, a boolean over specialization constants only, is printed as `?:` in
    /// this dialect (see `Dialect::spec_logic_as_select`).
    fn spec_select(&self, e: &Expr) -> bool {
        e.ty == Scalar::Bool && self.d.spec_logic_as_select() && self.compile_time(e)
    }

    /// Literals, spec constants, the workgroup size and pure operations on them.
    fn compile_time(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Lit(_) => true,
            ExprKind::Param(p) => matches!(self.k.params[p.0 as usize].kind, ParamKind::Spec { .. }),
            ExprKind::Builtin { builtin: Builtin::WorkgroupSize, .. } => true,
            ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::BitCast(a) => self.compile_time(a),
            ExprKind::Binary(_, a, b) => self.compile_time(a) && self.compile_time(b),
            ExprKind::Select(c, a, b) => self.compile_time(c) && self.compile_time(a) && self.compile_time(b),
            _ => false,
        }
    }

    /// The stride-halving tree over the local linear index, in shared scratch memory.
    fn reduce(&mut self, var: VarId, op: ReduceOp, value: &Expr) {
        let ty = value.ty;
        let scratch = scratch_name(ty);
        let v = self.expr(value);
        let n = self.k.workgroup_invocations();
        let barrier = format!("{};", self.d.barrier());
        let u = self.d.scalar(Scalar::U32);
        let combine = self.combine(op, ty, &format!("{scratch}[ok_lindex]"), &format!("{scratch}[ok_lindex + ok_s]"));
        self.line(&format!("// {}: stride-halving tree over {n} invocations", op.dsl_name()));
        self.line(&format!("{scratch}[ok_lindex] = {v};"));
        self.line(&barrier);
        self.line(&format!("for ({u} ok_s = {}u; ok_s > 0u; ok_s >>= 1u) {{", n / 2));
        self.line(&format!("    if (ok_lindex < ok_s) {{ {scratch}[ok_lindex] = {combine}; }}"));
        self.line(&format!("    {barrier}"));
        self.line("}");
        let name = self.local(var);
        self.line(&format!("{name} = {scratch}[0];"));
        self.line(&barrier);
    }

    /// The pair tree of `workgroup_argmax` / `argmin` (the interpreter's
    /// `reduce_pair_tree`): values in the type's scratch, indices in `ok_red_index`.
    fn reduce_pair(&mut self, var: VarId, op: ReduceOp, value: &Expr, arg: &onekernel_dsl::ir::ReduceArg) {
        let ty = value.ty;
        let (scratch, index) = (scratch_name(ty), PAIR_INDEX_SCRATCH);
        let (v, ix) = (self.expr(value), self.expr(&arg.index));
        let n = self.k.workgroup_invocations();
        let barrier = format!("{};", self.d.barrier());
        let (u, t) = (self.d.scalar(Scalar::U32), self.d.scalar(ty));
        let cmp = if op == ReduceOp::Min { "<" } else { ">" };
        self.line(&format!("// {}: stride-halving tree over {n} invocations of (value, index) pairs", op.dsl_arg_name()));
        self.line(&format!("{scratch}[ok_lindex] = {v};"));
        self.line(&format!("{index}[ok_lindex] = {ix};"));
        self.line(&barrier);
        self.line(&format!("for ({u} ok_s = {}u; ok_s > 0u; ok_s >>= 1u) {{", n / 2));
        self.line("    if (ok_lindex < ok_s) {");
        self.line(&format!("        {t} ok_va = {scratch}[ok_lindex];"));
        self.line(&format!("        {t} ok_vb = {scratch}[ok_lindex + ok_s];"));
        self.line(&format!("        {u} ok_ib = {index}[ok_lindex + ok_s];"));
        self.line(&format!("        if ((ok_vb {cmp} ok_va) || (ok_vb == ok_va && ok_ib < {index}[ok_lindex])) {{"));
        self.line(&format!("            {scratch}[ok_lindex] = ok_vb;"));
        self.line(&format!("            {index}[ok_lindex] = ok_ib;"));
        self.line("        }");
        self.line("    }");
        self.line(&format!("    {barrier}"));
        self.line("}");
        let (name, iname) = (self.local(var), self.local(arg.var));
        self.line(&format!("{name} = {scratch}[0];"));
        self.line(&format!("{iname} = {index}[0];"));
        self.line(&barrier);
    }

    fn combine(&self, op: ReduceOp, ty: Scalar, a: &str, b: &str) -> String {
        match op {
            ReduceOp::Sum if ty == Scalar::I32 => self.d.wrapping_i32("+", a, Some(b)),
            ReduceOp::Sum => format!("({a} + {b})"),
            ReduceOp::Max => format!("ok_max_{}({a}, {b})", ty.name()),
            ReduceOp::Min => format!("ok_min_{}({a}, {b})", ty.name()),
        }
    }

    /// An expression, fully parenthesized.
    pub fn expr(&self, e: &Expr) -> String {
        let d = self.d;
        match &e.kind {
            ExprKind::Lit(l) => match *l {
                Literal::F32(b) => d.float_literal(b),
                Literal::U32(v) => d.uint_literal(v),
                Literal::I32(v) => d.int_literal(v),
                Literal::Bool(b) => b.to_string(),
            },
            ExprKind::Var(v) => self.local(*v),
            ExprKind::Param(p) => {
                let param = &self.k.params[p.0 as usize];
                match param.kind {
                    ParamKind::Push { .. } => d.push_ref(&escaped(param)),
                    _ => d.spec_ref(&escaped(param)),
                }
            }
            ExprKind::Builtin { builtin: Builtin::WorkgroupSize, axis } => d.uint_literal(self.k.workgroup[*axis as usize]),
            ExprKind::Builtin { builtin, axis } => d.builtin(*builtin, *axis),
            // `&&` / `||` over specialization constants whose right operand is itself
            // logic, as `?:` where the dialect asks for it.
            ExprKind::Binary(BinaryOp::And | BinaryOp::BitAnd, a, b) if self.spec_select(e) && nested_logic(b) => {
                format!("({} ? {} : false)", self.expr(a), self.expr(b))
            }
            ExprKind::Binary(BinaryOp::Or | BinaryOp::BitOr, a, b) if self.spec_select(e) && nested_logic(b) => {
                format!("({} ? true : {})", self.expr(a), self.expr(b))
            }
            ExprKind::Unary(op, a) => {
                let x = self.expr(a);
                match (op, a.ty) {
                    (UnaryOp::Neg, Scalar::I32) => d.wrapping_i32("-", &x, None),
                    (UnaryOp::Neg, _) => format!("(-{x})"),
                    (UnaryOp::Not, Scalar::Bool) => format!("(!{x})"),
                    (UnaryOp::Not, _) => format!("(~{x})"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (self.expr(a), self.expr(b));
                let ty = a.ty;
                match op {
                    BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul if ty == Scalar::I32 => d.wrapping_i32(op.symbol(), &x, Some(&y)),
                    BinaryOp::Shl if ty == Scalar::I32 => d.wrapping_i32("<<", &x, Some(&y)),
                    BinaryOp::BitAnd if ty == Scalar::Bool => format!("({x} && {y})"),
                    BinaryOp::BitOr if ty == Scalar::Bool => format!("({x} || {y})"),
                    BinaryOp::BitXor if ty == Scalar::Bool => format!("({x} != {y})"),
                    _ => format!("({x} {} {y})", op.symbol()),
                }
            }
            ExprKind::Index { place, index } => {
                let i = self.expr(index);
                match place {
                    Place::Buffer(p) => {
                        let param = &self.k.params[p.0 as usize];
                        match param.kind {
                            ParamKind::Buffer { elem, .. } => d.buffer_load(&ident(&param.name), elem, &i),
                            _ => String::new(),
                        }
                    }
                    Place::Local(l) => format!("{}[{i}]", self.local(*l)),
                    Place::Shared(s) if self.halves.contains(&(s.0 as usize)) => {
                        d.word_from_halves(&format!("{}[{i}]", shared_name(&self.k.shared[s.0 as usize].name)))
                    }
                    Place::Shared(s) => {
                        let sh = &self.k.shared[s.0 as usize];
                        let name = shared_name(&sh.name);
                        if let Some((base, x, k, mask)) = field_index(index) {
                            let k_value = match k.kind {
                                ExprKind::Lit(Literal::U32(v)) => Some(v),
                                _ => None,
                            };
                            let f = FieldText { base: self.expr(base), x: self.expr(x), k: self.expr(k), k_value, mask };
                            if let Some(load) = d.shared_field_load(&name, sh.elem, &f) {
                                return load;
                            }
                        }
                        format!("{name}[{i}]")
                    }
                }
            }
            ExprKind::Select(c, a, b) => format!("({} ? {} : {})", self.expr(c), self.expr(a), self.expr(b)),
            ExprKind::Cast(a) => d.cast(a.ty, e.ty, &self.expr(a)),
            ExprKind::BitCast(a) => d.bitcast(a.ty, e.ty, &self.expr(a)),
            ExprKind::Intrinsic(op, args) => {
                // `f16_bits_to_f32(w >> 16)` / `(w & 65535)`: the helpers read the half
                // from the word directly (one conversion instruction on NVIDIA, no shift
                // or mask); both only look at the low 16 bits of their argument otherwise.
                if let (Intrinsic::F16BitsToF32, [a]) = (op, args.as_slice()) {
                    if let Some((w, high)) = half_of_word(a) {
                        return format!("ok_f16_{}to_f32({})", if high { "hi_" } else { "" }, self.expr(w));
                    }
                }
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                let suffix = match op {
                    Intrinsic::CountOnes | Intrinsic::F16BitsToF32 | Intrinsic::Bf16BitsToF32 | Intrinsic::F32ToF16Bits => String::new(),
                    _ => format!("_{}", e.ty.name()),
                };
                let name = match op {
                    Intrinsic::F16BitsToF32 => "f16_to_f32",
                    Intrinsic::Bf16BitsToF32 => "bf16_to_f32",
                    // The helper an f16 store rounds with (CUDA: `cvt.rn.f16.f32`).
                    Intrinsic::F32ToF16Bits => "f32_to_f16",
                    Intrinsic::CountOnes => return d.count_ones(&args[0]),
                    Intrinsic::FastExp => return d.fast_exp(&args[0]),
                    Intrinsic::FastExp2 => return d.fast_exp2(&args[0]),
                    other => other.dsl_name(),
                };
                format!("ok_{name}{suffix}({})", args.join(", "))
            }
            ExprKind::Call { func, args } => {
                let args: Vec<String> = args.iter().map(|a| self.expr(a)).collect();
                format!("ok_{func}({})", args.join(", "))
            }
        }
    }
}

/// `base + ((x >> k) & mask)` (either order) over `u32` with `mask + 1` a power of two:
/// `(base, x, k, mask)`, an index made of a table's start and a bit field of a word.
fn field_index(e: &Expr) -> Option<(&Expr, &Expr, &Expr, u32)> {
    let ExprKind::Binary(BinaryOp::Add, a, b) = &e.kind else { return None };
    fn field(f: &Expr) -> Option<(&Expr, &Expr, u32)> {
        let ExprKind::Binary(BinaryOp::BitAnd, shifted, m) = &f.kind else { return None };
        let ExprKind::Lit(Literal::U32(mask)) = m.kind else { return None };
        let ExprKind::Binary(BinaryOp::Shr, x, k) = &shifted.kind else { return None };
        (x.ty == Scalar::U32 && k.ty == Scalar::U32 && mask.checked_add(1).is_some_and(u32::is_power_of_two)).then_some((&**x, &**k, mask))
    }
    if e.ty != Scalar::U32 {
        return None;
    }
    match (field(b), field(a)) {
        (Some((x, k, m)), _) => Some((&**a, x, k, m)),
        (None, Some((x, k, m))) => Some((&**b, x, k, m)),
        _ => None,
    }
}

/// `w >> 16` → `(w, true)`, `w & 65535` → `(w, false)` for a `u32` word `w`: which
/// half of a 32-bit word a half-precision conversion reads.
fn half_of_word(e: &Expr) -> Option<(&Expr, bool)> {
    match &e.kind {
        ExprKind::Binary(op, w, k) if w.ty == Scalar::U32 => match (op, &k.kind) {
            (BinaryOp::Shr, ExprKind::Lit(Literal::U32(16))) => Some((w, true)),
            (BinaryOp::BitAnd, ExprKind::Lit(Literal::U32(65535))) => Some((w, false)),
            _ => None,
        },
        _ => None,
    }
}

fn escaped(p: &onekernel_dsl::ir::Param) -> onekernel_dsl::ir::Param {
    let mut p = p.clone();
    p.name = ident(&p.name);
    p
}

/// No shared arrays (a library function's printer, or a dialect without f16 pairs).
static NO_ARRAYS: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();

/// The generated name of a register tile (`tl_` and [`tile_identifier`]: `o[3]` is
/// `tl_o3`).
///
/// [`tile_identifier`]: onekernel_dsl::ir::tile_identifier
pub fn tile_name(name: &str) -> String {
    format!("tl_{}", onekernel_dsl::ir::tile_identifier(name))
}

/// The generated name of a shared array.
pub fn shared_name(name: &str) -> String {
    format!("sh_{name}")
}

/// The shared flag through which `last_arrival` tells the workgroup whether it arrived
/// last (its first word).
pub const ARRIVAL_FLAG: &str = "ok_arrival";

/// Words of [`ARRIVAL_FLAG`]: four, so that the workgroup's shared memory stays a
/// multiple of 16 bytes. With one word (45,828 bytes in all), NVIDIA's Vulkan driver
/// (580.159.04) ran `attn_decode_chunk_mma`'s cooperative-matrix loads wrong in every
/// variant, the ones that never arrive too; with four it runs them right.
pub const ARRIVAL_FLAG_WORDS: u32 = 4;

/// Whether the kernel has a `last_arrival`.
pub fn has_arrivals(k: &Kernel) -> bool {
    let mut found = false;
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| found |= matches!(s.kind, StmtKind::Arrive { .. }));
    found
}

/// The u32 scratch array of the indices a pair reduction carries.
pub const PAIR_INDEX_SCRATCH: &str = "ok_red_index";

/// Whether the kernel has a pair reduction (`workgroup_argmax` / `argmin`).
pub fn has_pair_reduction(k: &Kernel) -> bool {
    let mut found = false;
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| {
        if let StmtKind::Reduce { arg: Some(_), .. } = &s.kind {
            found = true;
        }
    });
    found
}

/// The scratch array a reduction of type `ty` uses.
pub fn scratch_name(ty: Scalar) -> String {
    format!("ok_red_{}", ty.name())
}

/// Value types reduced in the kernel (each gets one scratch array).
pub fn reduction_types(k: &Kernel) -> Vec<Scalar> {
    let mut tys = Vec::new();
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| {
        if let StmtKind::Reduce { value, .. } = &s.kind {
            if !tys.contains(&value.ty) {
                tys.push(value.ty);
            }
        }
    });
    tys.sort();
    tys
}

/// Whether a boolean is itself logic (`&&`, `||`, `?:`, or `!` of one of those): as the
/// right operand of `&&` / `||` over specialization constants, glslang compiled such
/// operands into SPIR-V that uses an id before defining it (`a && (b || c)`, `a || (b &&
/// c)`, `a && (b ? c : a)`; `(a || b) && c`, `a && !b` and comparisons compile:
/// docs/CODEGEN.md, "Specialization constants and glslang").
/// Adds every shared array `stmts` store into by scalar stores or `tile_store` (not
/// `async_copy`: its data may be read only after a wait and a `barrier()`).
fn shared_writes(stmts: &[Stmt], out: &mut std::collections::BTreeSet<u32>) {
    onekernel_dsl::visit::walk_stmts(stmts, &mut |s| match &s.kind {
        StmtKind::Store { place: Place::Shared(sh), .. } => {
            out.insert(sh.0);
        }
        StmtKind::Tile(t) => {
            if let TileOp::Store { dst: Place::Shared(sh), .. } = t.as_ref() {
                out.insert(sh.0);
            }
        }
        _ => {}
    });
}

fn nested_logic(e: &Expr) -> bool {
    e.ty == Scalar::Bool
        && match &e.kind {
            ExprKind::Binary(BinaryOp::And | BinaryOp::BitAnd | BinaryOp::Or | BinaryOp::BitOr, ..) | ExprKind::Select(..) => true,
            ExprKind::Unary(UnaryOp::Not, a) => nested_logic(a),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::field_index;
    use onekernel_dsl::ir::{BinaryOp, Expr, ExprKind, SpanId, VarId};
    use onekernel_dsl::types::{Literal, Scalar};

    fn e(kind: ExprKind, ty: Scalar) -> Expr {
        Expr { kind, ty, span: SpanId::NONE }
    }
    fn lit(v: u32) -> Expr {
        e(ExprKind::Lit(Literal::U32(v)), Scalar::U32)
    }
    fn var(i: u32) -> Expr {
        e(ExprKind::Var(VarId(i)), Scalar::U32)
    }
    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        let ty = a.ty;
        e(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty)
    }

    #[test]
    fn a_table_start_plus_a_bit_field_is_a_field_index_in_either_order() {
        let field = |mask| bin(BinaryOp::BitAnd, bin(BinaryOp::Shr, var(1), lit(8)), lit(mask));
        let base = || bin(BinaryOp::Mul, var(0), lit(17));
        for sum in [bin(BinaryOp::Add, base(), field(15)), bin(BinaryOp::Add, field(15), base())] {
            let (b, x, k, m) = field_index(&sum).expect("base + field");
            assert_eq!((b, x, k, m), (&base(), &var(1), &lit(8), 15));
        }
        // Not a field: a mask that is not 2^n − 1, a field without a shift, a product.
        assert!(field_index(&bin(BinaryOp::Add, base(), field(10))).is_none());
        assert!(field_index(&bin(BinaryOp::Add, base(), bin(BinaryOp::BitAnd, var(1), lit(15)))).is_none());
        assert!(field_index(&bin(BinaryOp::Mul, base(), field(15))).is_none());
    }
}
