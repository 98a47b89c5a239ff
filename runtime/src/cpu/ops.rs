//! The meaning of every IR operation on 32-bit register bits, applied to the active
//! lanes of a workgroup at once (the match on the operation is outside the lane loop).
//!
//! Semantics (the contract every backend reproduces):
//! * f32 `+ − ×` are IEEE-754 binary32 with round-to-nearest-even and subnormals kept;
//!   `fma` is `f32::mul_add` (one rounding). Nothing is contracted.
//! * i32/u32 `+ − ×` and unary `−` wrap around (two's complement).
//! * Integer `/` truncates toward zero and `%` takes the dividend's sign; a zero divisor
//!   and `i32::MIN / −1` are faults (they are undefined on GPUs).
//! * Shifts by an amount outside 0..32 are faults; `>>` is arithmetic on i32.
//! * `min`/`max` are `a < b ? a : b` / `a > b ? a : b` exactly (so `max(NaN, 1) = 1`,
//!   `max(1, NaN) = NaN`); `clamp(x, lo, hi) = min(max(x, lo), hi)`.
//! * f32 → integer conversion truncates; NaN or an out-of-range value is a fault.
//!   Integer → f32 rounds to nearest even. i32 ↔ u32 keeps the bits.

use super::error::Fault;
use onekernel_dsl::half::{bf16_to_f32, f16_to_f32, f32_to_f16};
use onekernel_dsl::ir::{BinaryOp, Intrinsic, UnaryOp};
use onekernel_dsl::types::Scalar;

#[inline(always)]
fn fl(x: u32) -> f32 {
    f32::from_bits(x)
}

#[inline(always)]
fn map1(lanes: &[u16], a: &[u32], out: &mut [u32], f: impl Fn(u32) -> u32) {
    for &l in lanes {
        let l = l as usize;
        out[l] = f(a[l]);
    }
}

#[inline(always)]
fn map2(lanes: &[u16], a: &[u32], b: &[u32], out: &mut [u32], f: impl Fn(u32, u32) -> u32) {
    for &l in lanes {
        let l = l as usize;
        out[l] = f(a[l], b[l]);
    }
}

#[inline(always)]
fn try_map2(lanes: &[u16], a: &[u32], b: &[u32], out: &mut [u32], f: impl Fn(u32, u32) -> Result<u32, Fault>) -> Result<(), (u16, Fault)> {
    for &l in lanes {
        let i = l as usize;
        out[i] = f(a[i], b[i]).map_err(|e| (l, e))?;
    }
    Ok(())
}

fn shift_amount(b: u32, rhs: Scalar) -> Result<u32, Fault> {
    let amount = if rhs == Scalar::I32 { b as i32 as i64 } else { b as i64 };
    if (0..32).contains(&amount) {
        Ok(amount as u32)
    } else {
        Err(Fault::ShiftOutOfRange { amount })
    }
}

/// `out = a op b` on the lanes; `ty` is the left operand's type, `rhs` the right's.
pub(crate) fn binary(op: BinaryOp, ty: Scalar, rhs: Scalar, lanes: &[u16], a: &[u32], b: &[u32], out: &mut [u32]) -> Result<(), (u16, Fault)> {
    use BinaryOp::*;
    use Scalar::*;
    match (op, ty) {
        (Add, F32) => map2(lanes, a, b, out, |x, y| (fl(x) + fl(y)).to_bits()),
        (Sub, F32) => map2(lanes, a, b, out, |x, y| (fl(x) - fl(y)).to_bits()),
        (Mul, F32) => map2(lanes, a, b, out, |x, y| (fl(x) * fl(y)).to_bits()),
        (Add, _) => map2(lanes, a, b, out, |x, y| x.wrapping_add(y)),
        (Sub, _) => map2(lanes, a, b, out, |x, y| x.wrapping_sub(y)),
        (Mul, _) => map2(lanes, a, b, out, |x, y| x.wrapping_mul(y)),
        (Div, U32) => try_map2(lanes, a, b, out, |x, y| x.checked_div(y).ok_or(Fault::DivisionByZero))?,
        (Rem, U32) => try_map2(lanes, a, b, out, |x, y| x.checked_rem(y).ok_or(Fault::DivisionByZero))?,
        (Div | Rem, I32) => try_map2(lanes, a, b, out, |x, y| {
            let (x, y) = (x as i32, y as i32);
            if y == 0 {
                return Err(Fault::DivisionByZero);
            }
            let r = if op == Div { x.checked_div(y) } else { x.checked_rem(y) };
            r.map(|v| v as u32).ok_or(Fault::DivisionOverflow)
        })?,
        (BitAnd, _) => map2(lanes, a, b, out, |x, y| x & y),
        (BitOr, _) => map2(lanes, a, b, out, |x, y| x | y),
        (BitXor, _) => map2(lanes, a, b, out, |x, y| x ^ y),
        (Shl, _) => try_map2(lanes, a, b, out, |x, y| Ok(x << shift_amount(y, rhs)?))?,
        (Shr, I32) => try_map2(lanes, a, b, out, |x, y| Ok(((x as i32) >> shift_amount(y, rhs)?) as u32))?,
        (Shr, _) => try_map2(lanes, a, b, out, |x, y| Ok(x >> shift_amount(y, rhs)?))?,
        (Eq, F32) => map2(lanes, a, b, out, |x, y| (fl(x) == fl(y)) as u32),
        (Ne, F32) => map2(lanes, a, b, out, |x, y| (fl(x) != fl(y)) as u32),
        (Lt, F32) => map2(lanes, a, b, out, |x, y| (fl(x) < fl(y)) as u32),
        (Le, F32) => map2(lanes, a, b, out, |x, y| (fl(x) <= fl(y)) as u32),
        (Gt, F32) => map2(lanes, a, b, out, |x, y| (fl(x) > fl(y)) as u32),
        (Ge, F32) => map2(lanes, a, b, out, |x, y| (fl(x) >= fl(y)) as u32),
        (Eq, _) => map2(lanes, a, b, out, |x, y| (x == y) as u32),
        (Ne, _) => map2(lanes, a, b, out, |x, y| (x != y) as u32),
        (Lt, I32) => map2(lanes, a, b, out, |x, y| ((x as i32) < (y as i32)) as u32),
        (Le, I32) => map2(lanes, a, b, out, |x, y| ((x as i32) <= (y as i32)) as u32),
        (Gt, I32) => map2(lanes, a, b, out, |x, y| ((x as i32) > (y as i32)) as u32),
        (Ge, I32) => map2(lanes, a, b, out, |x, y| ((x as i32) >= (y as i32)) as u32),
        (Lt, _) => map2(lanes, a, b, out, |x, y| (x < y) as u32),
        (Le, _) => map2(lanes, a, b, out, |x, y| (x <= y) as u32),
        (Gt, _) => map2(lanes, a, b, out, |x, y| (x > y) as u32),
        (Ge, _) => map2(lanes, a, b, out, |x, y| (x >= y) as u32),
        // Short-circuit forms are evaluated by the caller; here both sides are known.
        (And, _) => map2(lanes, a, b, out, |x, y| x & y),
        (Or, _) => map2(lanes, a, b, out, |x, y| x | y),
        (Div | Rem, _) => unreachable_op(lanes, out),
    }
    Ok(())
}

/// Float `/` and `%` never reach the interpreter (the validator rejects them); writing
/// zeros keeps this total without a panic path.
fn unreachable_op(lanes: &[u16], out: &mut [u32]) {
    for &l in lanes {
        out[l as usize] = 0;
    }
}

/// `out = op a`.
pub(crate) fn unary(op: UnaryOp, ty: Scalar, lanes: &[u16], a: &[u32], out: &mut [u32]) {
    match (op, ty) {
        (UnaryOp::Neg, Scalar::F32) => map1(lanes, a, out, |x| x ^ 0x8000_0000),
        (UnaryOp::Neg, _) => map1(lanes, a, out, |x| (x as i32).wrapping_neg() as u32),
        (UnaryOp::Not, Scalar::Bool) => map1(lanes, a, out, |x| x ^ 1),
        (UnaryOp::Not, _) => map1(lanes, a, out, |x| !x),
    }
}

/// `out = a as to` (value conversion).
pub(crate) fn cast(from: Scalar, to: Scalar, lanes: &[u16], a: &[u32], out: &mut [u32]) -> Result<(), (u16, Fault)> {
    use Scalar::*;
    match (from, to) {
        (F32, I32) => {
            for &l in lanes {
                let v = fl(a[l as usize]);
                if !(-2147483648.0..2147483648.0).contains(&v) {
                    return Err((l, Fault::ConversionOutOfRange { value: v, to }));
                }
                out[l as usize] = v as i32 as u32;
            }
        }
        (F32, U32) => {
            for &l in lanes {
                let v = fl(a[l as usize]);
                if !(v > -1.0 && v < 4294967296.0) {
                    return Err((l, Fault::ConversionOutOfRange { value: v, to }));
                }
                out[l as usize] = v as u32;
            }
        }
        (I32, F32) => map1(lanes, a, out, |x| (x as i32 as f32).to_bits()),
        (U32, F32) => map1(lanes, a, out, |x| (x as f32).to_bits()),
        // Same type, i32 ↔ u32 and bool → integer all keep the register bits.
        _ => map1(lanes, a, out, |x| x),
    }
    Ok(())
}

/// An intrinsic on `args` (each a full-width lane vector).
pub(crate) fn intrinsic(op: Intrinsic, ty: Scalar, lanes: &[u16], args: &[&[u32]], out: &mut [u32]) {
    use Scalar::*;
    let min = |x: u32, y: u32| -> u32 {
        let lt = match ty {
            F32 => fl(x) < fl(y),
            I32 => (x as i32) < (y as i32),
            _ => x < y,
        };
        if lt {
            x
        } else {
            y
        }
    };
    let max = |x: u32, y: u32| -> u32 {
        let gt = match ty {
            F32 => fl(x) > fl(y),
            I32 => (x as i32) > (y as i32),
            _ => x > y,
        };
        if gt {
            x
        } else {
            y
        }
    };
    match op {
        Intrinsic::Min => map2(lanes, args[0], args[1], out, min),
        Intrinsic::Max => map2(lanes, args[0], args[1], out, max),
        Intrinsic::Clamp => {
            for &l in lanes {
                let l = l as usize;
                out[l] = min(max(args[0][l], args[1][l]), args[2][l]);
            }
        }
        Intrinsic::Abs if ty == F32 => map1(lanes, args[0], out, |x| x & 0x7fff_ffff),
        Intrinsic::Abs => map1(lanes, args[0], out, |x| (x as i32).wrapping_abs() as u32),
        Intrinsic::Fma => {
            for &l in lanes {
                let l = l as usize;
                out[l] = fl(args[0][l]).mul_add(fl(args[1][l]), fl(args[2][l])).to_bits();
            }
        }
        Intrinsic::CountOnes => map1(lanes, args[0], out, |x| x.count_ones()),
        Intrinsic::F16BitsToF32 => map1(lanes, args[0], out, |x| f16_to_f32(x as u16).to_bits()),
        Intrinsic::Bf16BitsToF32 => map1(lanes, args[0], out, |x| bf16_to_f32(x as u16).to_bits()),
        Intrinsic::F32ToF16Bits => map1(lanes, args[0], out, |x| f32_to_f16(fl(x)) as u32),
        Intrinsic::FastExp => map1(lanes, args[0], out, |x| fast_exp(fl(x)).to_bits()),
        Intrinsic::FastExp2 => map1(lanes, args[0], out, |x| fast_exp2(fl(x)).to_bits()),
        Intrinsic::FunnelShr => {
            for &l in lanes {
                let l = l as usize;
                out[l] = funnel_shr(args[0][l], args[1][l], args[2][l]);
            }
        }
        Intrinsic::PanelWord => {
            for &l in lanes {
                let l = l as usize;
                out[l] = onekernel_dsl::ir::panel_word(args[0][l], args[1][l], args[2][l]);
            }
        }
    }
}

/// The interpreter's `fast_exp(x)`: e^x in f64, rounded to f32 (a GPU's approximation
/// differs from it by a few ulp; `fast` kernels are checked by tolerance).
pub fn fast_exp(x: f32) -> f32 {
    (x as f64).exp() as f32
}

/// The interpreter's `fast_exp2(x)`: 2^x in f64, rounded to f32.
pub fn fast_exp2(x: f32) -> f32 {
    (x as f64).exp2() as f32
}

/// The DSL's `funnel_shr(lo, hi, s)`: the low 32 bits of `hi:lo >> (s & 31)`.
pub fn funnel_shr(lo: u32, hi: u32, s: u32) -> u32 {
    ((((hi as u64) << 32) | lo as u64) >> (s & 31)) as u32
}

#[cfg(test)]
mod tests {
    use super::{fast_exp, fast_exp2, funnel_shr};

    #[test]
    fn fast_exp_is_the_rounded_exponential_with_its_limits() {
        assert_eq!(fast_exp(0.0), 1.0);
        assert_eq!(fast_exp(1.0), std::f32::consts::E);
        assert_eq!(fast_exp(f32::NEG_INFINITY), 0.0);
        assert_eq!(fast_exp(-200.0), 0.0);
        assert_eq!(fast_exp(100.0), f32::INFINITY);
        assert!((fast_exp(-3.5) - 0.030_197_383).abs() < 1e-9);
        assert_eq!(fast_exp2(3.0), 8.0);
        assert_eq!(fast_exp2(-1.0), 0.5);
        assert_eq!(fast_exp2(f32::NEG_INFINITY), 0.0);
        assert_eq!(fast_exp2(-200.0), 0.0);
        assert_eq!(fast_exp2(200.0), f32::INFINITY);
    }

    #[test]
    fn funnel_shr_takes_a_window_of_hi_lo_and_wraps_the_shift() {
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 0), 0x89ab_cdef);
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 8), 0x6789_abcd);
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 16), 0x4567_89ab);
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 31), 0x0246_8acf);
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 32), 0x89ab_cdef);
        assert_eq!(funnel_shr(0x89ab_cdef, 0x0123_4567, 40), 0x6789_abcd);
    }
}
