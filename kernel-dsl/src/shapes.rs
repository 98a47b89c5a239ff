//! Declared buffer lengths (`#[len(…)]`): the rule for what such an expression may
//! contain, its evaluation before a launch, and its text for messages.

use crate::ir::{BinaryOp, Builtin, Expr, ExprKind, Intrinsic, ParamId};
use crate::types::Literal;

/// Why a length expression is not allowed, if it is not: it may use literals, push and
/// spec constants, `num_groups()` and `WORKGROUP_*`, with integer arithmetic, `min`,
/// `max` and `select`.
pub fn check(e: &Expr) -> Result<(), String> {
    let ok = match &e.kind {
        ExprKind::Lit(_) | ExprKind::Param(_) => true,
        ExprKind::Builtin { builtin, .. } => matches!(builtin, Builtin::NumGroups | Builtin::WorkgroupSize),
        ExprKind::Binary(_, a, b) => return check(a).and(check(b)),
        ExprKind::Unary(_, a) | ExprKind::Cast(a) => return check(a),
        ExprKind::Select(c, a, b) => return check(c).and(check(a)).and(check(b)),
        ExprKind::Intrinsic(Intrinsic::Min | Intrinsic::Max, args) => return args.iter().try_for_each(check),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err("a `#[len(…)]` expression may use literals, push and spec constants, num_groups() and \
             WORKGROUP_*, with integer arithmetic, min, max and select"
            .into())
    }
}

/// Evaluates a length expression exactly (64-bit, overflow is an error).
pub fn eval(e: &Expr, param: &dyn Fn(ParamId) -> Option<Literal>, groups: [u32; 3], workgroup: [u32; 3]) -> Result<u64, String> {
    let v = |x: &Expr| eval(x, param, groups, workgroup);
    let of = || "overflow in a length expression".to_string();
    Ok(match &e.kind {
        ExprKind::Lit(l) => match l {
            Literal::U32(x) => *x as u64,
            Literal::I32(x) if *x >= 0 => *x as u64,
            Literal::Bool(b) => *b as u64,
            _ => return Err("a length expression must be a non-negative integer".into()),
        },
        ExprKind::Param(p) => match param(*p) {
            Some(Literal::U32(x)) => x as u64,
            Some(Literal::I32(x)) if x >= 0 => x as u64,
            Some(Literal::Bool(b)) => b as u64,
            _ => return Err(format!("parameter #{} has no non-negative integer value", p.0)),
        },
        ExprKind::Builtin { builtin: Builtin::NumGroups, axis } => groups[*axis as usize] as u64,
        ExprKind::Builtin { builtin: Builtin::WorkgroupSize, axis } => workgroup[*axis as usize] as u64,
        ExprKind::Cast(a) => v(a)?,
        ExprKind::Binary(op, a, b) => {
            let (x, y) = (v(a)?, v(b)?);
            match op {
                BinaryOp::Add => x.checked_add(y).ok_or_else(of)?,
                BinaryOp::Sub => x.checked_sub(y).ok_or_else(of)?,
                BinaryOp::Mul => x.checked_mul(y).ok_or_else(of)?,
                BinaryOp::Div => x.checked_div(y).ok_or("division by zero in a length expression")?,
                BinaryOp::Rem => x.checked_rem(y).ok_or("division by zero in a length expression")?,
                BinaryOp::Shl => x.checked_shl(y as u32).ok_or_else(of)?,
                BinaryOp::Shr => x.checked_shr(y as u32).unwrap_or(0),
                BinaryOp::Lt => (x < y) as u64,
                BinaryOp::Le => (x <= y) as u64,
                BinaryOp::Gt => (x > y) as u64,
                BinaryOp::Ge => (x >= y) as u64,
                BinaryOp::Eq => (x == y) as u64,
                BinaryOp::Ne => (x != y) as u64,
                BinaryOp::BitAnd | BinaryOp::And => x & y,
                BinaryOp::BitOr | BinaryOp::Or => x | y,
                BinaryOp::BitXor => x ^ y,
            }
        }
        ExprKind::Select(c, a, b) => {
            if v(c)? != 0 {
                v(a)?
            } else {
                v(b)?
            }
        }
        ExprKind::Intrinsic(Intrinsic::Min, args) if args.len() == 2 => v(&args[0])?.min(v(&args[1])?),
        ExprKind::Intrinsic(Intrinsic::Max, args) if args.len() == 2 => v(&args[0])?.max(v(&args[1])?),
        _ => return Err("unsupported construct in a length expression".into()),
    })
}

/// The expression as DSL text (`num_groups().x * n_cols`), for messages and the manifest.
pub fn text(e: &Expr, param_name: &dyn Fn(ParamId) -> String) -> String {
    let t = |x: &Expr| text(x, param_name);
    match &e.kind {
        ExprKind::Lit(l) => match l {
            Literal::U32(x) => x.to_string(),
            Literal::I32(x) => x.to_string(),
            Literal::Bool(b) => b.to_string(),
            Literal::F32(b) => f32::from_bits(*b).to_string(),
        },
        ExprKind::Param(p) => param_name(*p),
        ExprKind::Builtin { builtin: Builtin::NumGroups, axis } => format!("num_groups().{}", ["x", "y", "z"][*axis as usize]),
        ExprKind::Builtin { axis, .. } => format!("WORKGROUP_{}", ["X", "Y", "Z"][*axis as usize]),
        ExprKind::Cast(a) => t(a),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", t(a), op.symbol(), t(b)),
        ExprKind::Select(c, a, b) => format!("select({}, {}, {})", t(c), t(a), t(b)),
        ExprKind::Intrinsic(op, args) => format!("{}({})", op.dsl_name(), args.iter().map(t).collect::<Vec<_>>().join(", ")),
        _ => "?".into(),
    }
}
