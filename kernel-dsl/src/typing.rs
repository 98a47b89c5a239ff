//! The DSL's type rules, in one place: the macro's lowering and the IR validator both
//! ask these functions, so they cannot disagree.

use crate::ir::{BinaryOp, Intrinsic, UnaryOp};
use crate::types::Scalar;

/// The result type of `l op r`, or a message saying what is allowed.
pub fn binary_type(op: BinaryOp, l: Scalar, r: Scalar) -> Result<Scalar, String> {
    use BinaryOp::*;
    let sym = op.symbol();
    match op {
        Add | Sub | Mul => {
            if l != r || !l.is_numeric() {
                return Err(mismatch(sym, l, r, "two f32, two i32 or two u32 values"));
            }
            Ok(l)
        }
        Div | Rem => {
            if l == Scalar::F32 && r == Scalar::F32 {
                return Err(match op {
                    Div => "f32 `/` is lowered to the library's `div(a, b)`; \
                            the IR operator `/` is integer-only"
                        .into(),
                    _ => "`%` is not defined for f32 (no portable exact remainder); \
                          use integers or `x - n * y` explicitly"
                        .into(),
                });
            }
            if l != r || !l.is_int() {
                // f32 `/` is valid (the library's `div`), f32 `%` is not.
                let allowed = if op == Div { "two f32, two i32 or two u32 values" } else { "two i32 or two u32 values" };
                return Err(mismatch(sym, l, r, allowed));
            }
            Ok(l)
        }
        BitAnd | BitOr | BitXor => {
            if l != r || l == Scalar::F32 {
                return Err(mismatch(sym, l, r, "two integers of one type or two bools"));
            }
            Ok(l)
        }
        Shl | Shr => {
            if !l.is_int() || !r.is_int() {
                return Err(mismatch(sym, l, r, "an i32 or u32 shifted by an i32 or u32 amount"));
            }
            Ok(l)
        }
        Eq | Ne => {
            if l != r {
                return Err(mismatch(sym, l, r, "two values of the same type"));
            }
            Ok(Scalar::Bool)
        }
        Lt | Le | Gt | Ge => {
            if l != r || !l.is_numeric() {
                return Err(mismatch(sym, l, r, "two numbers of the same type"));
            }
            Ok(Scalar::Bool)
        }
        And | Or => {
            if l != Scalar::Bool || r != Scalar::Bool {
                return Err(mismatch(sym, l, r, "two bools"));
            }
            Ok(Scalar::Bool)
        }
    }
}

fn mismatch(sym: &str, l: Scalar, r: Scalar, allowed: &str) -> String {
    format!(
        "mismatched types: `{l} {sym} {r}`; `{sym}` takes {allowed} \
         (convert explicitly with `as`)"
    )
}

/// The result type of a unary operator.
pub fn unary_type(op: UnaryOp, t: Scalar) -> Result<Scalar, String> {
    match op {
        UnaryOp::Neg if matches!(t, Scalar::F32 | Scalar::I32) => Ok(t),
        UnaryOp::Neg => Err(format!("cannot negate a {t}; `-` takes f32 or i32")),
        UnaryOp::Not => {
            Ok(t).and_then(
                |t| {
                    if t == Scalar::F32 {
                        Err("`!` takes a bool (logical not) or an integer (bitwise not), not f32".into())
                    } else {
                        Ok(t)
                    }
                },
            )
        }
    }
}

/// Whether `from as to` is a supported value conversion.
pub fn cast_allowed(from: Scalar, to: Scalar) -> Result<(), String> {
    if to == Scalar::Bool && from != Scalar::Bool {
        return Err(format!("cannot cast {from} to bool; compare instead (e.g. `x != 0`)"));
    }
    if from == Scalar::Bool && to == Scalar::F32 {
        return Err("cannot cast bool to f32; use `select(b, 1.0, 0.0)`".into());
    }
    Ok(())
}

/// Whether a bit reinterpretation between the two types exists (f32, i32, u32).
pub fn bitcast_allowed(from: Scalar, to: Scalar) -> Result<(), String> {
    if from == Scalar::Bool || to == Scalar::Bool {
        return Err("bit casts take f32, i32 or u32".into());
    }
    Ok(())
}

/// The result type of an intrinsic for the given argument types.
pub fn intrinsic_type(op: Intrinsic, args: &[Scalar]) -> Result<Scalar, String> {
    let name = op.dsl_name();
    if args.len() != op.arity() {
        return Err(format!("`{name}` takes {} argument(s), got {}", op.arity(), args.len()));
    }
    let same = |allowed: &[Scalar]| -> Result<Scalar, String> {
        let t = args[0];
        if args.iter().any(|&a| a != t) || !allowed.contains(&t) {
            let list: Vec<_> = args.iter().map(|a| a.name()).collect();
            let allowed: Vec<_> = allowed.iter().map(|a| a.name()).collect();
            return Err(format!("`{name}` got ({}); its arguments must all be one of: {}", list.join(", "), allowed.join(", ")));
        }
        Ok(t)
    };
    match op {
        Intrinsic::Min | Intrinsic::Max | Intrinsic::Clamp => same(&[Scalar::F32, Scalar::I32, Scalar::U32]),
        Intrinsic::Abs => same(&[Scalar::F32, Scalar::I32]),
        Intrinsic::Fma => same(&[Scalar::F32]),
        Intrinsic::CountOnes => same(&[Scalar::I32, Scalar::U32]).map(|_| Scalar::U32),
        Intrinsic::F16BitsToF32 | Intrinsic::Bf16BitsToF32 => same(&[Scalar::U32]).map(|_| Scalar::F32),
        Intrinsic::F32ToF16Bits => same(&[Scalar::F32]).map(|_| Scalar::U32),
        Intrinsic::FunnelShr | Intrinsic::PanelWord => same(&[Scalar::U32]),
        Intrinsic::FastExp | Intrinsic::FastExp2 => same(&[Scalar::F32]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_requires_equal_numeric_types() {
        assert_eq!(binary_type(BinaryOp::Add, Scalar::F32, Scalar::F32), Ok(Scalar::F32));
        assert!(binary_type(BinaryOp::Add, Scalar::F32, Scalar::U32).unwrap_err().contains("mismatched types"));
        assert!(binary_type(BinaryOp::Add, Scalar::Bool, Scalar::Bool).is_err());
    }

    #[test]
    fn float_division_is_not_an_ir_operator() {
        assert!(binary_type(BinaryOp::Div, Scalar::F32, Scalar::F32).unwrap_err().contains("div(a, b)"));
        assert_eq!(binary_type(BinaryOp::Div, Scalar::U32, Scalar::U32), Ok(Scalar::U32));
    }

    #[test]
    fn shifts_take_any_integer_amount() {
        assert_eq!(binary_type(BinaryOp::Shl, Scalar::I32, Scalar::U32), Ok(Scalar::I32));
        assert!(binary_type(BinaryOp::Shl, Scalar::F32, Scalar::U32).is_err());
    }

    #[test]
    fn intrinsic_arity_and_types() {
        assert_eq!(intrinsic_type(Intrinsic::Fma, &[Scalar::F32; 3]), Ok(Scalar::F32));
        assert!(intrinsic_type(Intrinsic::Fma, &[Scalar::F32; 2]).is_err());
        assert!(intrinsic_type(Intrinsic::Abs, &[Scalar::U32]).is_err());
        assert_eq!(intrinsic_type(Intrinsic::CountOnes, &[Scalar::I32]), Ok(Scalar::U32));
        assert_eq!(intrinsic_type(Intrinsic::FunnelShr, &[Scalar::U32; 3]), Ok(Scalar::U32));
        assert!(intrinsic_type(Intrinsic::FunnelShr, &[Scalar::I32; 3]).is_err());
        assert_eq!(intrinsic_type(Intrinsic::FastExp, &[Scalar::F32]), Ok(Scalar::F32));
        assert!(intrinsic_type(Intrinsic::FastExp, &[Scalar::U32]).is_err());
        assert_eq!(intrinsic_type(Intrinsic::F32ToF16Bits, &[Scalar::F32]), Ok(Scalar::U32));
        assert!(intrinsic_type(Intrinsic::F32ToF16Bits, &[Scalar::U32]).is_err());
    }

    #[test]
    fn casts() {
        assert!(cast_allowed(Scalar::F32, Scalar::Bool).is_err());
        assert!(cast_allowed(Scalar::Bool, Scalar::U32).is_ok());
        assert!(bitcast_allowed(Scalar::F32, Scalar::U32).is_ok());
        assert!(bitcast_allowed(Scalar::Bool, Scalar::U32).is_err());
    }
}
