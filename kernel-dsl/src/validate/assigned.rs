//! Definite assignment: a variable declared with `let x;` must be assigned on every
//! path before it is read (the same rule rustc applies).

use super::{Diagnostics, ErrorKind};
use crate::ir::{ExprKind, Kernel, LocalDecl, Stmt, StmtKind};
use crate::visit::{stmt_exprs, walk_expr};

/// `None` means the point is unreachable (after `return`, `break`, `continue`).
type State = Option<Vec<bool>>;

pub(super) fn check(k: &Kernel, d: &mut Diagnostics) {
    for f in &k.functions {
        let mut st = vec![false; f.locals.len()];
        st[..f.params.len()].iter_mut().for_each(|a| *a = true);
        let st = block(&f.locals, &f.body, Some(st), d);
        if let Some(st) = st {
            check_reads(&f.locals, &[&f.result], &st, d);
        }
    }
    block(&k.locals, &k.body, Some(vec![false; k.locals.len()]), d);
}

fn block(locals: &[LocalDecl], stmts: &[Stmt], mut st: State, d: &mut Diagnostics) -> State {
    for s in stmts {
        st = stmt(locals, s, st, d);
    }
    st
}

fn check_reads(locals: &[LocalDecl], exprs: &[&crate::ir::Expr], st: &[bool], d: &mut Diagnostics) {
    for e in exprs {
        walk_expr(e, &mut |x| {
            let v = match &x.kind {
                ExprKind::Var(v) => Some(*v),
                ExprKind::Index { place: crate::ir::Place::Local(v), .. } => Some(*v),
                _ => None,
            };
            if let Some(v) = v {
                if !st.get(v.0 as usize).copied().unwrap_or(true) {
                    d.error(
                        x.span,
                        ErrorKind::Unassigned,
                        format!(
                            "use of possibly-unassigned variable `{}`: assign it on every path \
                             before reading it",
                            locals[v.0 as usize].name
                        ),
                    );
                }
            }
        });
    }
}

fn merge(a: State, b: State) -> State {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => Some(a.iter().zip(&b).map(|(x, y)| *x && *y).collect()),
    }
}

fn stmt(locals: &[LocalDecl], s: &Stmt, st: State, d: &mut Diagnostics) -> State {
    let mut a = st?;
    check_reads(locals, &stmt_exprs(s), &a, d);
    match &s.kind {
        StmtKind::Let { var, init } => a[var.0 as usize] = init.is_some(),
        StmtKind::Assign { var, .. } => a[var.0 as usize] = true,
        StmtKind::Arrive { var, .. } => a[var.0 as usize] = true,
        StmtKind::Reduce { var, arg, .. } => {
            a[var.0 as usize] = true;
            if let Some(x) = arg {
                a[x.var.0 as usize] = true;
            }
        }
        StmtKind::Store { .. }
        | StmtKind::LoadWords { .. }
        | StmtKind::StoreWords { .. }
        | StmtKind::Barrier
        | StmtKind::AsyncCopy { .. }
        | StmtKind::AsyncCommit
        | StmtKind::AsyncWait { .. }
        | StmtKind::Tile(_) => {}
        StmtKind::If { then_body, else_body, .. } => {
            let t = block(locals, then_body, Some(a.clone()), d);
            let e = block(locals, else_body, Some(a), d);
            return merge(t, e);
        }
        StmtKind::For { var, body, .. } => {
            let mut inner = a.clone();
            inner[var.0 as usize] = true;
            block(locals, body, Some(inner), d);
        }
        StmtKind::While { body, .. } => {
            block(locals, body, Some(a.clone()), d);
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Return => return None,
    }
    Some(a)
}
