//! Type and reference checking of kernel bodies and library functions.

use super::{Diagnostics, ErrorKind};
use crate::ir::{
    async_copy_name, Access, ArrayInit, Expr, ExprKind, Function, Init, Intrinsic, Kernel, LocalDecl, ParamId, ParamKind, Place, ReduceOp, SharedId,
    SpanId, Stmt, StmtKind, TileOp, TileRole, VarId,
};
use crate::types::{Scalar, StorageType, VarType};
use crate::typing;

/// What names a body can see.
struct Scope<'a> {
    kernel: &'a Kernel,
    locals: &'a [LocalDecl],
    /// Functions callable from here (for a library function: those before it).
    callable: &'a [Function],
    /// Inside a library function: only `let`, no params, no shared memory.
    in_function: Option<&'a str>,
}

/// Returns true when no error was found.
pub(super) fn check(k: &Kernel, d: &mut Diagnostics) -> bool {
    let before = d.errors.len();
    for (i, f) in k.functions.iter().enumerate() {
        let scope = Scope { kernel: k, locals: &f.locals, callable: &k.functions[..i], in_function: Some(&f.name) };
        if f.locals.len() < f.params.len() || f.params.iter().zip(&f.locals).any(|(p, l)| l.ty != VarType::Scalar(*p)) {
            d.error(SpanId::NONE, ErrorKind::Type, format!("function `{}`: its first locals must be its parameters", f.name));
            continue;
        }
        for s in &f.body {
            if !matches!(s.kind, StmtKind::Let { .. }) {
                d.error(s.span, ErrorKind::Unsupported, format!("function `{}`: library functions are straight-line `let`s", f.name));
            }
        }
        check_block(&scope, &f.body, 0, d);
        if let Some(t) = check_expr(&scope, &f.result, d) {
            if t != f.ret {
                d.error(f.result.span, ErrorKind::Type, format!("function `{}` returns {t}, declared {}", f.name, f.ret));
            }
        }
    }
    let scope = Scope { kernel: k, locals: &k.locals, callable: &k.functions, in_function: None };
    check_tile_kernel(k, d);
    check_counters_only_arrive(k, d);
    check_block(&scope, &k.body, 0, d);
    d.errors.len() == before
}

fn check_block(sc: &Scope, stmts: &[Stmt], loop_depth: u32, d: &mut Diagnostics) {
    for s in stmts {
        check_stmt(sc, s, loop_depth, d);
    }
}

fn local<'a>(sc: &'a Scope, id: VarId, span: SpanId, d: &mut Diagnostics) -> Option<&'a LocalDecl> {
    let l = sc.locals.get(id.0 as usize);
    if l.is_none() {
        d.error(span, ErrorKind::Undeclared, format!("reference to undeclared local #{}", id.0));
    }
    l
}

fn expect(d: &mut Diagnostics, span: SpanId, got: Option<Scalar>, want: Scalar, what: &str) {
    if let Some(got) = got {
        if got != want {
            d.error(span, ErrorKind::Type, format!("{what} must be {want}, found {got}"));
        }
    }
}

/// A local's declaration: its initializer has the local's type, an array's element
/// count matches its length, and an array has an initializer.
fn check_let(sc: &Scope, s: &Stmt, var: VarId, init: Option<&Init>, d: &mut Diagnostics) {
    let Some(decl) = local(sc, var, s.span, d) else { return };
    match (decl.ty, init) {
        (VarType::Scalar(t), Some(Init::Value(e))) => {
            let got = check_expr(sc, e, d);
            expect(d, e.span, got, t, &format!("the initializer of `{}`", decl.name));
        }
        (VarType::Scalar(_), None) => {}
        (VarType::Array { elem, len }, Some(Init::Array(a))) => match a {
            ArrayInit::Fill(e) => {
                let got = check_expr(sc, e, d);
                expect(d, e.span, got, elem, &format!("the fill value of `{}`", decl.name));
            }
            ArrayInit::Elements(es) => {
                if es.len() != len as usize {
                    d.error(
                        s.span,
                        ErrorKind::Type,
                        format!(
                            "array `{}` is declared with {len} elements but initialized \
                                 with {}",
                            decl.name,
                            es.len()
                        ),
                    );
                }
                for e in es {
                    let got = check_expr(sc, e, d);
                    expect(d, e.span, got, elem, "an array element");
                }
            }
        },
        (VarType::Array { .. }, _) => {
            d.error(s.span, ErrorKind::Unassigned, format!("array `{}` needs an initializer (`[value; N]` or `[a, b, …]`)", decl.name))
        }
        (VarType::Scalar(_), Some(Init::Array(_))) => {
            d.error(s.span, ErrorKind::Type, format!("`{}` is a scalar but has an array initializer", decl.name))
        }
    }
}

fn check_stmt(sc: &Scope, s: &Stmt, loop_depth: u32, d: &mut Diagnostics) {
    match &s.kind {
        StmtKind::Let { var, init } => check_let(sc, s, *var, init.as_ref(), d),
        StmtKind::Assign { var, value } => {
            let got = check_expr(sc, value, d);
            let Some(decl) = local(sc, *var, s.span, d) else { return };
            if !decl.mutable {
                d.error(s.span, ErrorKind::Immutable, format!("cannot assign twice to immutable variable `{}`; declare it `let mut`", decl.name));
            }
            match decl.ty {
                VarType::Scalar(t) => expect(d, value.span, got, t, &format!("the value assigned to `{}`", decl.name)),
                VarType::Array { .. } => {
                    d.error(s.span, ErrorKind::Type, format!("cannot assign a whole array `{}`; assign its elements", decl.name))
                }
            }
        }
        StmtKind::Store { place, index, value } => {
            let it = check_expr(sc, index, d);
            check_index_type(d, index.span, it);
            let vt = check_expr(sc, value, d);
            if let Some((elem, writable, name)) = place_info(sc, *place, s.span, d) {
                if !writable {
                    d.error(
                        s.span,
                        ErrorKind::Immutable,
                        format!("cannot store into `{name}`: it is read-only (declare the buffer `&mut [T]` or the array `let mut`)"),
                    );
                }
                expect(d, value.span, vt, elem, &format!("a value stored into `{name}`"));
            }
        }
        StmtKind::If { cond, then_body, else_body } => {
            let t = check_expr(sc, cond, d);
            expect(d, cond.span, t, Scalar::Bool, "an `if` condition");
            check_block(sc, then_body, loop_depth, d);
            check_block(sc, else_body, loop_depth, d);
        }
        StmtKind::For { var, start, end, step, body, peel } => {
            if *peel && !step.is_one() {
                d.error(step.span, ErrorKind::Unsupported, "`#[peel_single_trip]` takes a unit-step loop (`a..b`)");
            }
            // The peeled trip is no loop, so nothing in it may leave or restart this one.
            if let Some(at) = peel.then(|| loop_exit(body)).flatten() {
                d.error(at, ErrorKind::Unsupported, "`break` / `continue` of a `#[peel_single_trip]` loop");
            }
            let ts = check_expr(sc, start, d);
            let te = check_expr(sc, end, d);
            let tp = check_expr(sc, step, d);
            if let Some(decl) = local(sc, *var, s.span, d) {
                match decl.ty {
                    VarType::Scalar(t) if t.is_int() => {
                        expect(d, start.span, ts, t, "the range start");
                        expect(d, end.span, te, t, "the range end");
                        expect(d, step.span, tp, t, "the step");
                    }
                    _ => d.error(s.span, ErrorKind::Type, format!("loop counter `{}` must be i32 or u32, found {}", decl.name, decl.ty)),
                }
            }
            check_block(sc, body, loop_depth + 1, d);
        }
        StmtKind::While { cond, body } => {
            let t = check_expr(sc, cond, d);
            expect(d, cond.span, t, Scalar::Bool, "a `while` condition");
            check_block(sc, body, loop_depth + 1, d);
        }
        StmtKind::Break | StmtKind::Continue => {
            if loop_depth == 0 {
                d.error(s.span, ErrorKind::Unsupported, "`break` / `continue` outside of a loop");
            }
        }
        StmtKind::Return | StmtKind::Barrier | StmtKind::AsyncCommit => {}
        StmtKind::AsyncCopy { dst, dst_index, src, src_index, words, bypass_l1 } => {
            check_transfer_indices(sc, dst_index, src_index, async_copy_name(*bypass_l1), d);
            check_async_copy(sc, *dst, *src, *words, *bypass_l1, s.span, d);
        }
        StmtKind::LoadWords { dst, dst_index, src, src_index, words } => {
            check_transfer_indices(sc, dst_index, src_index, "load_words", d);
            check_load_words(sc, *dst, *src, *words, s.span, d);
        }
        StmtKind::StoreWords { dst, dst_index, src, src_index, words } => {
            check_transfer_indices(sc, dst_index, src_index, "store_words", d);
            check_store_words(sc, *dst, *src, *words, s.span, d);
        }
        StmtKind::Tile(t) => check_tile(sc, t, s.span, d),
        StmtKind::AsyncWait { pending } => {
            if *pending > MAX_ASYNC_PENDING {
                d.error(s.span, ErrorKind::Unsupported, format!("`async_wait({pending})`: at most {MAX_ASYNC_PENDING} groups can stay in flight"));
            }
        }
        StmtKind::Arrive { var, counters, index, count } => check_arrive(sc, s.span, *var, *counters, index, count, d),
        StmtKind::Reduce { var, op, value, arg } => {
            let vt = check_expr(sc, value, d);
            if let Some(a) = arg {
                if *op == ReduceOp::Sum {
                    d.error(s.span, ErrorKind::Type, "a pair reduction is an argmax or an argmin, not a sum");
                }
                if let Some(it) = check_expr(sc, &a.index, d) {
                    if it != Scalar::U32 {
                        d.error(a.index.span, ErrorKind::Type, format!("the index of `{}` is u32, found {it}", op.dsl_arg_name()));
                    }
                }
                if let Some(decl) = local(sc, a.var, s.span, d) {
                    if decl.ty != VarType::Scalar(Scalar::U32) {
                        d.error(s.span, ErrorKind::Type, format!("the index result `{}` is u32, it is declared {}", decl.name, decl.ty));
                    }
                }
            }
            if let Some(decl) = local(sc, *var, s.span, d) {
                if let (Some(vt), VarType::Scalar(t)) = (vt, decl.ty) {
                    if vt != t {
                        d.error(s.span, ErrorKind::Type, format!("`{}` yields {vt} but `{}` is {t}", op.dsl_name(), decl.name));
                    }
                }
                if matches!(decl.ty, VarType::Array { .. }) {
                    d.error(s.span, ErrorKind::Type, "a reduction result must be a scalar");
                }
            }
            if let Some(vt) = vt {
                let ok = match op {
                    ReduceOp::Sum => vt.is_numeric(),
                    ReduceOp::Max | ReduceOp::Min => vt.is_numeric(),
                };
                if !ok {
                    d.error(value.span, ErrorKind::Type, format!("`{}` takes f32, i32 or u32, found {vt}", op.dsl_name()));
                }
            }
        }
    }
}

fn check_index_type(d: &mut Diagnostics, span: SpanId, t: Option<Scalar>) {
    if let Some(t) = t {
        if !t.is_int() {
            d.error(span, ErrorKind::Type, format!("an index must be u32 or i32, found {t}"));
        }
    }
}

/// The destination and source indices of a transfer (`async_copy`, `load_words`,
/// `store_words`) are u32.
fn check_transfer_indices(sc: &Scope, dst_index: &Expr, src_index: &Expr, what: &str, d: &mut Diagnostics) {
    for (index, role) in [(dst_index, "destination"), (src_index, "source")] {
        let it = check_expr(sc, index, d);
        expect(d, index.span, it, Scalar::U32, &format!("the `{what}` {role} index"));
    }
}

/// The largest `async_wait` argument (CUDA's `cp.async.wait_group` takes 0…7).
pub const MAX_ASYNC_PENDING: u32 = 7;

/// `async_copy`: a shared array of 32-bit elements filled from a buffer of the same
/// type, 1, 2 or 4 elements at a time (the sizes every backend copies natively); 4 where
/// the copy bypasses L1.
fn check_async_copy(sc: &Scope, dst: SharedId, src: ParamId, words: u32, bypass_l1: bool, span: SpanId, d: &mut Diagnostics) {
    if sc.in_function.is_some() {
        d.error(span, ErrorKind::Unsupported, "library functions cannot access buffers or shared memory");
        return;
    }
    let what = async_copy_name(bypass_l1);
    if bypass_l1 && words != 4 {
        // CUDA's `cp.async.cg` exists for 16-byte copies only.
        d.error(span, ErrorKind::Unsupported, format!("`{what}` moves 4 elements (16 bytes, the one size that can bypass L1), not {words}"));
    } else if !matches!(words, 1 | 2 | 4) {
        d.error(span, ErrorKind::Unsupported, format!("`async_copy` moves 1, 2 or 4 elements, not {words}"));
    }
    let Some(shared) = sc.kernel.shared.get(dst.0 as usize) else {
        d.error(span, ErrorKind::Undeclared, format!("reference to undeclared shared array #{}", dst.0));
        return;
    };
    let Some(param) = sc.kernel.params.get(src.0 as usize) else {
        d.error(span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", src.0));
        return;
    };
    let ParamKind::Buffer { elem, .. } = &param.kind else {
        d.error(span, ErrorKind::Type, format!("`{what}` reads a buffer; `{}` is a scalar parameter", param.name));
        return;
    };
    if !matches!(elem, StorageType::F32 | StorageType::I32 | StorageType::U32) || elem.value_type() != shared.elem {
        d.error(
            span,
            ErrorKind::Type,
            format!(
                "`{what}` copies 32-bit elements between equal types: `{}` holds {}, buffer `{}` holds {}",
                shared.name,
                shared.elem,
                param.name,
                elem.name()
            ),
        );
    }
}

/// What `load_words` and `store_words` share: a kernel's (not a library function's)
/// statement of 2 or 4 elements, whose local array `var` holds at least that many.
/// `op` names the statement, its verb and the array's preposition ("into", "from") for
/// the messages. The array's declaration and element type, or `None` where the
/// statement cannot be checked further.
fn word_array<'s>(
    sc: &'s Scope,
    var: VarId,
    words: u32,
    span: SpanId,
    op: (&str, &str, &str),
    d: &mut Diagnostics,
) -> Option<(&'s LocalDecl, Scalar)> {
    let (what, verb, prep) = op;
    if sc.in_function.is_some() {
        d.error(span, ErrorKind::Unsupported, "library functions cannot access buffers or shared memory");
        return None;
    }
    if !matches!(words, 2 | 4) {
        d.error(span, ErrorKind::Unsupported, format!("`{what}` {verb} 2 or 4 elements, not {words}"));
    }
    let decl = local(sc, var, span, d)?;
    let VarType::Array { elem, len } = decl.ty else {
        d.error(span, ErrorKind::Type, format!("`{what}` {verb} {prep} a local array; `{}` is a scalar", decl.name));
        return None;
    };
    if len < words {
        d.error(span, ErrorKind::Type, format!("`{what}` of {words} elements {prep} `{}`, which holds {len}", decl.name));
    }
    Some((decl, elem))
}

/// `load_words`: a local array of 32-bit elements filled from a read-only buffer or a
/// shared array of the same type, 2 or 4 elements at a time (the 8- and 16-byte loads
/// of every backend; buffers read-only because GLSL reads them through a second,
/// vector-typed view of the binding).
fn check_load_words(sc: &Scope, dst: VarId, src: Place, words: u32, span: SpanId, d: &mut Diagnostics) {
    let Some((decl, dst_elem)) = word_array(sc, dst, words, span, ("load_words", "loads", "into"), d) else { return };
    let (src_name, held, matching) = match src {
        Place::Buffer(p) => {
            let Some(param) = sc.kernel.params.get(p.0 as usize) else {
                d.error(span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", p.0));
                return;
            };
            let ParamKind::Buffer { elem, access, .. } = &param.kind else {
                d.error(span, ErrorKind::Type, format!("`load_words` reads a buffer; `{}` is a scalar parameter", param.name));
                return;
            };
            if *access != Access::ReadOnly {
                d.error(span, ErrorKind::Unsupported, format!("`load_words` reads read-only buffers; `{}` is `&mut [{}]`", param.name, elem.name()));
            }
            let word = matches!(elem, StorageType::F32 | StorageType::I32 | StorageType::U32);
            (format!("buffer `{}`", param.name), elem.name().to_string(), word && elem.value_type() == dst_elem)
        }
        Place::Shared(id) => {
            let Some(shared) = sc.kernel.shared.get(id.0 as usize) else {
                d.error(span, ErrorKind::Undeclared, format!("reference to undeclared shared array #{}", id.0));
                return;
            };
            let word = matches!(shared.elem, Scalar::F32 | Scalar::I32 | Scalar::U32);
            (format!("shared array `{}`", shared.name), shared.elem.to_string(), word && shared.elem == dst_elem)
        }
        Place::Local(_) => {
            d.error(span, ErrorKind::Type, "`load_words` reads a buffer or a shared array, not a local array");
            return;
        }
    };
    if !matching {
        d.error(
            span,
            ErrorKind::Type,
            format!("`load_words` loads 32-bit elements between equal types: `{}` holds {}, {src_name} holds {held}", decl.name, dst_elem),
        );
    }
}

/// `store_words`: a writable buffer of 32-bit elements filled from a local array of the
/// same type, 2 or 4 elements at a time (the 8- and 16-byte stores of CUDA and MSL).
fn check_store_words(sc: &Scope, dst: ParamId, src: VarId, words: u32, span: SpanId, d: &mut Diagnostics) {
    let Some((decl, src_elem)) = word_array(sc, src, words, span, ("store_words", "stores", "from"), d) else { return };
    let Some(param) = sc.kernel.params.get(dst.0 as usize) else {
        d.error(span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", dst.0));
        return;
    };
    let ParamKind::Buffer { elem, access, .. } = &param.kind else {
        d.error(span, ErrorKind::Type, format!("`store_words` writes a buffer; `{}` is a scalar parameter", param.name));
        return;
    };
    if *access != Access::ReadWrite {
        d.error(span, ErrorKind::Type, format!("`store_words` writes `&mut` buffers; `{}` is `&[{}]`", param.name, elem.name()));
    }
    let word = matches!(elem, StorageType::F32 | StorageType::I32 | StorageType::U32);
    if !word || elem.value_type() != src_elem {
        d.error(
            span,
            ErrorKind::Type,
            format!(
                "`store_words` stores 32-bit elements between equal types: `{}` holds {}, buffer `{}` holds {}",
                decl.name,
                src_elem,
                param.name,
                elem.name()
            ),
        );
    }
}

/// A kernel with tiles (reported once, at its first tile): `fast`, since tensor cores do
/// not round their sums as the interpreter does, and whole groups of 32 invocations, the
/// unit that holds a tile.
/// `last_arrival`'s operands: a `&mut [u32]` buffer of counters, u32 index and count, a
/// bool result.
fn check_arrive(sc: &Scope, span: SpanId, var: VarId, counters: ParamId, index: &Expr, count: &Expr, d: &mut Diagnostics) {
    match sc.kernel.params.get(counters.0 as usize).map(|p| (&p.name, &p.kind)) {
        Some((_, ParamKind::Buffer { elem: StorageType::U32, access: Access::ReadWrite, .. })) => {}
        Some((name, _)) => d.error(span, ErrorKind::Type, format!("`last_arrival` counts in a `&mut [u32]` buffer; `{name}` is not one")),
        None => d.error(span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", counters.0)),
    }
    let it = check_expr(sc, index, d);
    expect(d, index.span, it, Scalar::U32, "the counter index of `last_arrival`");
    let ct = check_expr(sc, count, d);
    expect(d, count.span, ct, Scalar::U32, "the count of `last_arrival`");
    if let Some(decl) = local(sc, var, span, d) {
        if decl.ty != VarType::Scalar(Scalar::Bool) {
            d.error(span, ErrorKind::Type, format!("`last_arrival` yields bool but `{}` is {}", decl.name, decl.ty));
        }
    }
}

/// A buffer that `last_arrival` counts in is touched by arrivals only: a kernel that
/// also read or wrote it would see counts that other workgroups are changing.
fn check_counters_only_arrive(k: &Kernel, d: &mut Diagnostics) {
    let mut counters = Vec::new();
    crate::visit::walk_stmts(&k.body, &mut |s| {
        if let StmtKind::Arrive { counters: c, .. } = &s.kind {
            counters.push(*c);
        }
    });
    if counters.is_empty() {
        return;
    }
    let name = |p: ParamId| k.params.get(p.0 as usize).map(|p| p.name.clone()).unwrap_or_default();
    let message = |p: ParamId| format!("buffer `{}` holds `last_arrival`'s counters, which only arrivals may touch", name(p));
    crate::visit::walk_stmts(&k.body, &mut |s| {
        let place = match &s.kind {
            StmtKind::Store { place: Place::Buffer(p), .. } => Some(*p),
            StmtKind::AsyncCopy { src, .. } => Some(*src),
            StmtKind::LoadWords { src: Place::Buffer(p), .. } => Some(*p),
            StmtKind::StoreWords { dst, .. } => Some(*dst),
            _ => None,
        };
        if let Some(p) = place.filter(|p| counters.contains(p)) {
            d.error(s.span, ErrorKind::Type, message(p));
        }
        for e in crate::visit::stmt_exprs(s) {
            crate::visit::walk_expr(e, &mut |e| {
                if let ExprKind::Index { place: Place::Buffer(p), .. } = &e.kind {
                    if counters.contains(p) {
                        d.error(e.span, ErrorKind::Type, message(*p));
                    }
                }
            });
        }
    });
}

fn check_tile_kernel(k: &Kernel, d: &mut Diagnostics) {
    let Some(t) = k.tiles.first() else { return };
    if k.class == crate::ir::Determinism::Exact {
        let why = "tiles run on tensor cores, whose sums are not bitwise the reference's";
        d.error(t.span, ErrorKind::Unsupported, format!("tile `{}`: {why}: declare kernel `{}` `fast`", t.name, k.name));
    }
    let invocations = k.workgroup_invocations();
    if !invocations.is_multiple_of(32) {
        d.error(t.span, ErrorKind::Unsupported, format!("tile `{}` is held by groups of 32 invocations; the workgroup has {invocations}", t.name));
    }
}

/// A tile operation: tiles of the roles it needs, u32 indices and strides, f32 values,
/// memory of the tile's element type (u32 words of f16 pairs for operands, f32 for
/// accumulators; a writable one to store into).
fn check_tile(sc: &Scope, t: &TileOp, span: SpanId, d: &mut Diagnostics) {
    let op = t.name();
    if sc.in_function.is_some() {
        d.error(span, ErrorKind::Unsupported, "library functions cannot use tiles");
        return;
    }
    for e in t.exprs() {
        let want = if matches!(t, TileOp::Fill { .. } | TileOp::Scale { .. }) { Scalar::F32 } else { Scalar::U32 };
        let got = check_expr(sc, e, d);
        expect(d, e.span, got, want, &format!("the `{op}` operand"));
    }
    let role = |id: crate::ir::TileId, want: Option<TileRole>, what: &str, d: &mut Diagnostics| -> Option<TileRole> {
        let Some(decl) = sc.kernel.tiles.get(id.0 as usize) else {
            d.error(span, ErrorKind::Undeclared, format!("reference to undeclared tile #{}", id.0));
            return None;
        };
        if want.is_some_and(|w| w != decl.role) {
            let w = want.map(TileRole::constructor).unwrap_or_default();
            d.error(span, ErrorKind::Type, format!("`{op}` takes a `{w}()` {what}; `{}` is a `{}()`", decl.name, decl.role.constructor()));
        }
        Some(decl.role)
    };
    match t {
        TileOp::Fill { tile, .. } | TileOp::Scale { tile, .. } => {
            role(*tile, Some(TileRole::Acc), "tile", d);
        }
        TileOp::Mma { acc, a, b } => {
            role(*acc, Some(TileRole::Acc), "as its accumulators", d);
            role(*a, Some(TileRole::A), "as its A operand", d);
            role(*b, Some(TileRole::B), "as its B operand", d);
        }
        TileOp::Load { tile, src, .. } => {
            if let Some(r) = role(*tile, None, "tile", d) {
                check_tile_memory(sc, *src, r, false, op, span, d);
            }
        }
        TileOp::Store { tile, dst, .. } => {
            if role(*tile, Some(TileRole::Acc), "tile", d).is_some() {
                check_tile_memory(sc, *dst, TileRole::Acc, true, op, span, d);
            }
        }
        TileOp::Get { vals, tile, scratch, .. } => {
            check_slots(sc, *vals, Scalar::F32, op, span, d);
            if role(*tile, Some(TileRole::Acc), "tile", d).is_some() {
                check_scratch(sc, *scratch, TileRole::Acc, op, span, d);
            }
        }
        TileOp::Set { tile, vals, scratch, .. } => {
            check_slots(sc, *vals, Scalar::F32, op, span, d);
            match role(*tile, None, "tile", d) {
                Some(TileRole::B) => d.error(span, ErrorKind::Type, "`tile_set` writes a `tile_acc()` or a `tile_a()`, not a `tile_b()`"),
                Some(r) => check_scratch(sc, *scratch, r, op, span, d),
                None => {}
            }
        }
        TileOp::Coords { rows, cols } => {
            check_slots(sc, *rows, Scalar::U32, op, span, d);
            check_slots(sc, *cols, Scalar::U32, op, span, d);
        }
        TileOp::Reduce { vals, .. } => check_slots(sc, *vals, Scalar::F32, op, span, d),
        TileOp::PanelMma { accs, a, panel, .. } => {
            if accs.len() != 4 && accs.len() != 8 {
                d.error(
                    span,
                    ErrorKind::Type,
                    format!("`tile_mma_panel` updates four accumulators (64 columns) or eight (128); it was given {}", accs.len()),
                );
            }
            for acc in accs {
                role(*acc, Some(TileRole::Acc), "as each of its accumulators", d);
            }
            role(*a, Some(TileRole::A), "as its A operand", d);
            match panel {
                Place::Shared(id) => match sc.kernel.shared.get(id.0 as usize) {
                    Some(sh) if sh.elem != Scalar::U32 => d.error(
                        span,
                        ErrorKind::Type,
                        format!("`tile_mma_panel` reads its panel from a shared array of u32 words (f16 pairs); `{}` holds {}", sh.name, sh.elem),
                    ),
                    Some(_) => {}
                    None => d.error(span, ErrorKind::Undeclared, format!("reference to undeclared shared array #{}", id.0)),
                },
                _ => d.error(span, ErrorKind::Type, "`tile_mma_panel` reads its panel from a shared array of u32 words"),
            }
            if !sc.kernel.workgroup_invocations().is_multiple_of(128) {
                let n = sc.kernel.workgroup_invocations();
                d.error(
                    span,
                    ErrorKind::Unsupported,
                    format!("`tile_mma_panel` runs on groups of 128 invocations (a warpgroup); the workgroup has {n}"),
                );
            }
        }
        TileOp::PanelWait => {}
    }
    for v in t.locals_written() {
        if let Some(decl) = sc.locals.get(v.0 as usize).filter(|l| !l.mutable) {
            d.error(span, ErrorKind::Immutable, format!("`{op}` writes `{}`; declare it `let mut`", decl.name));
        }
    }
}

/// A local array of [`TILE_SLOTS`] values of `elem`.
fn check_slots(sc: &Scope, var: crate::ir::VarId, elem: Scalar, op: &str, span: SpanId, d: &mut Diagnostics) {
    let Some(decl) = sc.locals.get(var.0 as usize) else {
        return d.error(span, ErrorKind::Undeclared, format!("reference to undeclared local #{}", var.0));
    };
    let want = VarType::Array { elem, len: crate::ir::TILE_SLOTS };
    if decl.ty != want {
        d.error(span, ErrorKind::Type, format!("`{op}` takes a local array `[{elem}; {}]`; `{}` is {}", crate::ir::TILE_SLOTS, decl.name, decl.ty));
    }
}

/// The scratch of `tile_get` / `tile_set`: a shared array of the role's memory type.
fn check_scratch(sc: &Scope, place: Place, role: TileRole, op: &str, span: SpanId, d: &mut Diagnostics) {
    if !matches!(place, Place::Shared(_)) {
        return d.error(span, ErrorKind::Type, format!("`{op}`'s scratch is a shared array"));
    }
    // The backends that use it store and load the tile there.
    check_tile_memory(sc, place, role, true, op, span, d);
}

/// The memory of a tile load or store: a shared array or a buffer whose elements are the
/// role's (a buffer of exactly u32 or f32, not a packed type), writable for a store.
fn check_tile_memory(sc: &Scope, place: Place, role: TileRole, store: bool, op: &str, span: SpanId, d: &mut Diagnostics) {
    let want = role.memory_elem();
    let what = if want == Scalar::F32 { "f32 values" } else { "u32 words of two f16 values" };
    let (name, held, writable) = match place {
        Place::Shared(s) => match sc.kernel.shared.get(s.0 as usize) {
            Some(sh) => (sh.name.clone(), Some(sh.elem), true),
            None => return d.error(span, ErrorKind::Undeclared, format!("reference to undeclared shared array #{}", s.0)),
        },
        Place::Buffer(p) => match sc.kernel.params.get(p.0 as usize).map(|q| (&q.name, &q.kind)) {
            Some((name, ParamKind::Buffer { elem, access, .. })) => {
                let held = match elem {
                    StorageType::U32 => Some(Scalar::U32),
                    StorageType::F32 => Some(Scalar::F32),
                    _ => None,
                };
                (name.clone(), held, *access == Access::ReadWrite)
            }
            _ => return d.error(span, ErrorKind::Type, format!("`{op}` moves tiles to and from shared arrays and buffers")),
        },
        Place::Local(_) => {
            return d.error(span, ErrorKind::Unsupported, format!("`{op}` moves tiles to and from shared arrays and buffers, not local arrays"))
        }
    };
    if held != Some(want) {
        d.error(span, ErrorKind::Type, format!("`{op}` of a `{}()` uses {what}; `{name}` does not hold them", role.constructor()));
    }
    if store && !writable {
        d.error(span, ErrorKind::Type, format!("`{op}` writes `{name}`, a read-only buffer"));
    }
}

/// Element value type, whether it can be written, and its name.
fn place_info(sc: &Scope, place: Place, span: SpanId, d: &mut Diagnostics) -> Option<(Scalar, bool, String)> {
    if sc.in_function.is_some() && !matches!(place, Place::Local(_)) {
        d.error(span, ErrorKind::Unsupported, "library functions cannot access buffers or shared memory");
        return None;
    }
    match place {
        Place::Buffer(p) => match sc.kernel.params.get(p.0 as usize) {
            Some(param) => match &param.kind {
                ParamKind::Buffer { elem, access, .. } => Some((elem.value_type(), *access == Access::ReadWrite, param.name.clone())),
                _ => {
                    d.error(span, ErrorKind::Type, format!("`{}` is a scalar parameter, not a buffer", param.name));
                    None
                }
            },
            None => {
                d.error(span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", p.0));
                None
            }
        },
        Place::Local(v) => {
            let decl = local(sc, v, span, d)?;
            match decl.ty {
                VarType::Array { elem, .. } => Some((elem, decl.mutable, decl.name.clone())),
                VarType::Scalar(_) => {
                    d.error(span, ErrorKind::Type, format!("`{}` is a scalar; only arrays and buffers can be indexed", decl.name));
                    None
                }
            }
        }
        Place::Shared(s) => match sc.kernel.shared.get(s.0 as usize) {
            Some(sh) => Some((sh.elem, true, sh.name.clone())),
            None => {
                d.error(span, ErrorKind::Undeclared, format!("reference to undeclared shared array #{}", s.0));
                None
            }
        },
    }
}

/// Type of an expression, reporting errors; `None` when a child already failed.
fn check_expr(sc: &Scope, e: &Expr, d: &mut Diagnostics) -> Option<Scalar> {
    let computed: Option<Scalar> = match &e.kind {
        ExprKind::Lit(l) => Some(l.ty()),
        ExprKind::Var(v) => {
            let decl = local(sc, *v, e.span, d)?;
            match decl.ty {
                VarType::Scalar(t) => Some(t),
                VarType::Array { .. } => {
                    d.error(e.span, ErrorKind::Type, format!("array `{}` used as a value; index it", decl.name));
                    None
                }
            }
        }
        ExprKind::Param(p) => {
            if sc.in_function.is_some() {
                d.error(e.span, ErrorKind::Unsupported, "library functions cannot read kernel parameters");
                return None;
            }
            match sc.kernel.params.get(p.0 as usize) {
                Some(param) => match param.kind.scalar_type() {
                    Some(t) => Some(t),
                    None => {
                        d.error(e.span, ErrorKind::Type, format!("buffer `{}` used as a value; index it", param.name));
                        None
                    }
                },
                None => {
                    d.error(e.span, ErrorKind::Undeclared, format!("reference to undeclared parameter #{}", p.0));
                    None
                }
            }
        }
        ExprKind::Builtin { axis, .. } => {
            if *axis > 2 {
                d.error(e.span, ErrorKind::Type, "built-in ids have components x, y and z only");
                None
            } else {
                Some(Scalar::U32)
            }
        }
        ExprKind::Unary(op, a) => {
            let t = check_expr(sc, a, d)?;
            typing::unary_type(*op, t).map_err(|m| d.error(e.span, ErrorKind::Type, m)).ok()
        }
        ExprKind::Binary(op, a, b) => {
            let ta = check_expr(sc, a, d);
            let tb = check_expr(sc, b, d);
            typing::binary_type(*op, ta?, tb?).map_err(|m| d.error(e.span, ErrorKind::Type, m)).ok()
        }
        ExprKind::Index { place, index } => {
            let it = check_expr(sc, index, d);
            check_index_type(d, index.span, it);
            place_info(sc, *place, e.span, d).map(|(t, _, _)| t)
        }
        ExprKind::Select(c, a, b) => {
            let tc = check_expr(sc, c, d);
            expect(d, c.span, tc, Scalar::Bool, "the condition of `select`");
            let ta = check_expr(sc, a, d)?;
            let tb = check_expr(sc, b, d)?;
            if ta != tb {
                d.error(e.span, ErrorKind::Type, format!("`select` arms differ: {ta} and {tb}"));
                None
            } else {
                Some(ta)
            }
        }
        ExprKind::Cast(a) => {
            let t = check_expr(sc, a, d)?;
            typing::cast_allowed(t, e.ty).map_err(|m| d.error(e.span, ErrorKind::Type, m)).ok().map(|_| e.ty)
        }
        ExprKind::BitCast(a) => {
            let t = check_expr(sc, a, d)?;
            typing::bitcast_allowed(t, e.ty).map_err(|m| d.error(e.span, ErrorKind::Type, m)).ok().map(|_| e.ty)
        }
        ExprKind::Intrinsic(op, args) => {
            if *op == Intrinsic::PanelWord && sc.kernel.tiles.is_empty() {
                d.error(e.span, ErrorKind::Unsupported, "`panel_word` places the panels of `tile_mma_panel`; this kernel declares no tiles");
            }
            if *op == Intrinsic::PanelWord && sc.kernel.class == crate::ir::Determinism::Exact {
                d.error(
                    e.span,
                    ErrorKind::Unsupported,
                    format!(
                        "`panel_word` is each backend's own layout, for the panels of `tile_mma_panel`: declare kernel `{}` `fast`",
                        sc.kernel.name
                    ),
                );
            }
            if matches!(op, Intrinsic::FastExp | Intrinsic::FastExp2) && sc.kernel.class == crate::ir::Determinism::Exact {
                let (name, exact) = if *op == Intrinsic::FastExp { ("fast_exp", "exp") } else { ("fast_exp2", "exp2") };
                d.error(
                    e.span,
                    ErrorKind::Unsupported,
                    format!(
                        "`{name}` is the hardware's approximation, not bitwise the reference's: declare kernel `{}` `fast`, or use `{exact}`",
                        sc.kernel.name
                    ),
                );
            }
            let ts: Vec<Option<Scalar>> = args.iter().map(|a| check_expr(sc, a, d)).collect();
            let ts: Option<Vec<Scalar>> = ts.into_iter().collect();
            typing::intrinsic_type(*op, &ts?).map_err(|m| d.error(e.span, ErrorKind::Type, m)).ok()
        }
        ExprKind::Call { func, args } => {
            let ts: Vec<Option<Scalar>> = args.iter().map(|a| check_expr(sc, a, d)).collect();
            let Some(f) = sc.callable.iter().find(|f| &f.name == func) else {
                d.error(
                    e.span,
                    ErrorKind::Undeclared,
                    format!(
                        "call to `{func}`, which is not a library function carried by this kernel{}",
                        if sc.in_function.is_some() { " (or is not defined before its caller)" } else { "" }
                    ),
                );
                return None;
            };
            let ts: Option<Vec<Scalar>> = ts.into_iter().collect();
            let ts = ts?;
            if ts != f.params {
                let got: Vec<_> = ts.iter().map(|t| t.name()).collect();
                let want: Vec<_> = f.params.iter().map(|t| t.name()).collect();
                d.error(e.span, ErrorKind::Type, format!("`{func}` takes ({}), got ({})", want.join(", "), got.join(", ")));
                None
            } else {
                Some(f.ret)
            }
        }
    };
    let t = computed?;
    if t != e.ty {
        d.error(e.span, ErrorKind::Type, format!("expression is annotated {} but computes {t}", e.ty));
        return None;
    }
    Some(t)
}

/// The span of a `break` / `continue` in `body` that belongs to the loop whose body it is
/// (not to a loop nested in it).
fn loop_exit(body: &[Stmt]) -> Option<SpanId> {
    body.iter().find_map(|s| match &s.kind {
        StmtKind::Break | StmtKind::Continue => Some(s.span),
        StmtKind::If { then_body, else_body, .. } => loop_exit(then_body).or_else(|| loop_exit(else_body)),
        _ => None,
    })
}
