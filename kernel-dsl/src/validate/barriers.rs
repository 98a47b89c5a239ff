//! The plain missing-barrier pattern, decided at compile time: in a one-dimensional
//! workgroup, an invocation stores into its own element of a shared array
//! (`s[local_id().x]`, or `s[t]` with `let t = local_id().x;`) and then, in the same
//! block and with no barrier in between, reads the same array at another index: an
//! element another invocation writes, not yet ordered by a barrier.
//!
//! What it does not decide (the interpreter's race detector finds those at run time,
//! with the source line): stores at any other index, reads after a loop or an `if` that
//! wrote (state is dropped at control flow), two-dimensional workgroups (`local_id().x`
//! is not an invocation's own), and reads through `load_words` or `tile_load`.

use super::{Diagnostics, ErrorKind};
use crate::ir::{Builtin, Expr, ExprKind, Init, Kernel, Place, SharedId, Stmt, StmtKind, VarId};
use crate::visit::{expr_children, stmt_exprs, walk_expr};

pub(super) fn check(k: &Kernel, diag: &mut Diagnostics) {
    if k.workgroup[1] != 1 || k.workgroup[2] != 1 {
        return;
    }
    let mut own = Vec::new();
    block(k, &k.body, &mut own, diag);
}

/// Whether `e` is the invocation's own index: `local_id().x` or an immutable local
/// initialized with it.
fn is_own_index(e: &Expr, own: &[VarId]) -> bool {
    match &e.kind {
        ExprKind::Builtin { builtin: Builtin::LocalId, axis: 0 } => true,
        ExprKind::Var(v) => own.contains(v),
        _ => false,
    }
}

/// Structural equality, spans aside.
fn same(a: &Expr, b: &Expr) -> bool {
    let head = match (&a.kind, &b.kind) {
        (ExprKind::Lit(x), ExprKind::Lit(y)) => x == y,
        (ExprKind::Var(x), ExprKind::Var(y)) => x == y,
        (ExprKind::Param(x), ExprKind::Param(y)) => x == y,
        (ExprKind::Builtin { builtin: x, axis: i }, ExprKind::Builtin { builtin: y, axis: j }) => x == y && i == j,
        (ExprKind::Unary(x, _), ExprKind::Unary(y, _)) => x == y,
        (ExprKind::Binary(x, _, _), ExprKind::Binary(y, _, _)) => x == y,
        (ExprKind::Index { place: x, .. }, ExprKind::Index { place: y, .. }) => x == y,
        (ExprKind::Select(..), ExprKind::Select(..)) | (ExprKind::Cast(_), ExprKind::Cast(_)) | (ExprKind::BitCast(_), ExprKind::BitCast(_)) => {
            a.ty == b.ty
        }
        (ExprKind::Intrinsic(x, _), ExprKind::Intrinsic(y, _)) => x == y,
        (ExprKind::Call { func: x, .. }, ExprKind::Call { func: y, .. }) => x == y,
        _ => false,
    };
    let (ca, cb) = (expr_children(a), expr_children(b));
    head && ca.len() == cb.len() && ca.iter().zip(&cb).all(|(x, y)| same(x, y))
}

fn block(k: &Kernel, stmts: &[Stmt], own: &mut Vec<VarId>, diag: &mut Diagnostics) {
    // Own-element stores since the last barrier: array, index, where.
    let mut written: Vec<(SharedId, &Expr, crate::ir::SpanId)> = Vec::new();
    for s in stmts {
        for e in stmt_exprs(s) {
            walk_expr(e, &mut |x| {
                let ExprKind::Index { place: Place::Shared(id), index } = &x.kind else { return };
                if let Some((_, _, w_span)) = written.iter().find(|(w, i, _)| w == id && !same(i, index)) {
                    let name = &k.shared[id.0 as usize].name;
                    let line = k.loc(*w_span).map(|l| format!(" (line {})", l.line)).unwrap_or_default();
                    diag.error(
                        x.span,
                        ErrorKind::MissingBarrier,
                        format!(
                            "shared `{name}` is read here at an index other invocations write, but since the last barrier each \
                             invocation has only written its own element{line}: add `barrier();` between that write and this read"
                        ),
                    );
                }
            });
        }
        match &s.kind {
            StmtKind::Let { var, init: Some(Init::Value(e)) } if is_own_index(e, own) && !k.locals[var.0 as usize].mutable => own.push(*var),
            StmtKind::Store { place: Place::Shared(id), index, .. } if is_own_index(index, own) => written.push((*id, index, s.span)),
            StmtKind::If { then_body, else_body, .. } => {
                block(k, then_body, own, diag);
                block(k, else_body, own, diag);
                written.clear();
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => {
                block(k, body, own, diag);
                written.clear();
            }
            StmtKind::Barrier | StmtKind::Arrive { .. } | StmtKind::Reduce { .. } | StmtKind::AsyncWait { .. } | StmtKind::Tile(_) => written.clear(),
            _ => {}
        }
    }
}
