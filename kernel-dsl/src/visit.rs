//! Small read-only traversals of the IR shared by the validator, the interpreter's
//! preparation and the code generator.

use crate::ir::{ArrayInit, Expr, ExprKind, Init, Stmt, StmtKind};

/// Calls `f` on every statement, nested ones included, in source order.
pub fn walk_stmts<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in stmts {
        f(s);
        match &s.kind {
            StmtKind::If { then_body, else_body, .. } => {
                walk_stmts(then_body, f);
                walk_stmts(else_body, f);
            }
            StmtKind::For { body, .. } | StmtKind::While { body, .. } => walk_stmts(body, f),
            _ => {}
        }
    }
}

/// The expressions a statement evaluates directly (not those of nested statements).
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::Let { init, .. } => match init {
            None => vec![],
            Some(Init::Value(e)) | Some(Init::Array(ArrayInit::Fill(e))) => vec![e],
            Some(Init::Array(ArrayInit::Elements(es))) => es.iter().collect(),
        },
        StmtKind::Assign { value, .. } => vec![value],
        StmtKind::Store { index, value, .. } => vec![index, value],
        StmtKind::If { cond, .. } | StmtKind::While { cond, .. } => vec![cond],
        StmtKind::For { start, end, step, .. } => vec![start, end, step],
        StmtKind::Reduce { value, arg, .. } => match arg {
            Some(a) => vec![value, &a.index],
            None => vec![value],
        },
        StmtKind::Arrive { index, count, .. } => vec![index, count],
        StmtKind::AsyncCopy { dst_index, src_index, .. }
        | StmtKind::LoadWords { dst_index, src_index, .. }
        | StmtKind::StoreWords { dst_index, src_index, .. } => {
            vec![dst_index, src_index]
        }
        StmtKind::Tile(t) => t.exprs(),
        StmtKind::Break | StmtKind::Continue | StmtKind::Return | StmtKind::Barrier | StmtKind::AsyncCommit | StmtKind::AsyncWait { .. } => vec![],
    }
}

/// The direct sub-expressions of an expression.
pub fn expr_children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Param(_) | ExprKind::Builtin { .. } => {
            vec![]
        }
        ExprKind::Unary(_, a) | ExprKind::Cast(a) | ExprKind::BitCast(a) => vec![a],
        ExprKind::Binary(_, a, b) => vec![a, b],
        ExprKind::Index { index, .. } => vec![index],
        ExprKind::Select(c, a, b) => vec![c, a, b],
        ExprKind::Intrinsic(_, args) | ExprKind::Call { args, .. } => args.iter().collect(),
    }
}

/// Calls `f` on an expression and all its sub-expressions, parents first.
pub fn walk_expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    for c in expr_children(e) {
        walk_expr(c, f);
    }
}
