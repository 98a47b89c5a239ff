//! `log`, `log2` and `log1p`: the exponent from the bits, the mantissa normalized into
//! [√½, √2), and an odd-accurate polynomial for log(1 + f).

use super::builder::*;
use crate::ir::Function;
use crate::types::Scalar;

/// log(1+f) = f − f²/2 + f³·P(f) on [√½−1, √2−1] (Chebyshev fit, degree 8).
const LOG_P: [f32; 9] = [
    6.971_611_5e-2,
    -1.147_973_4e-1,
    1.168_542e-1,
    -1.242_568_7e-1,
    1.424_905_8e-1,
    -1.666_780_2e-1,
    2.000_071_6e-1,
    -2.499_999_7e-1,
    3.333_333_1e-1,
];

const LN2_HI: u32 = 0x3f31_7200;
const LN2_LO: u32 = 0x35bf_be8e;
/// log2(e) split into a head and a tail.
const LOG2E_HI: u32 = 0x3fb8_aa3b;
const LOG2E_LO: u32 = 0x32a5_705f;

/// Shared core: returns (e as f32, log(1+f)) for x = 2^e · (1+f).
fn reduce(fb: &mut FnBuilder, x: &V) -> (V, V) {
    // Shift the bits so that mantissas ≥ √½ land in the exponent below (musl's trick).
    let ix = fb.let_("ix", x.clone().bits() + u(0x3f80_0000 - 0x3f35_04f3));
    let e = fb.let_("e", ((ix.clone() >> u(23)).cast(Scalar::I32) - i(127)).cast(Scalar::F32));
    let m = fb.let_("m", ((ix & u(0x007f_ffff)) + u(0x3f35_04f3)).as_f32_bits());
    let fr = fb.let_("f", m - f(1.0));
    let f2 = fb.let_("f2", fr.clone() * fr.clone());
    let t = fb.let_("t", f2 * fma(fr.clone(), horner(&fr, &LOG_P), f(-0.5)));
    let l = fb.let_("l", fr + t);
    (e, l)
}

/// The special cases shared by `log` and `log2`: negative → NaN, ±0 and subnormals →
/// −inf, +inf → +inf, NaN → NaN.
fn specials(x: &V, y: V) -> V {
    let ex = exp_field(x);
    let y = select(ex.clone().eq(u(0)), -inf(), y);
    let y = select(x.clone().lt(f(0.0)).or(is_nan(x)), nan(), y);
    select(x.clone().eq(inf()), inf(), y)
}

/// `log(x)`, the natural logarithm. Max error 1 ulp over all positive normal floats
/// (measured against f64 over 10^6 inputs). Subnormal inputs count as 0 (−inf).
pub fn log() -> Function {
    let (mut fb, a) = FnBuilder::new("log", "ln x; ≤ 1 ulp over positive normal floats", &["x"]);
    let x = a[0].clone();
    let (e, l) = reduce(&mut fb, &x);
    let y = fma(e.clone(), fbits(LN2_HI), fma(e, fbits(LN2_LO), l));
    fb.finish(specials(&x, y))
}

/// `log2(x)`. Max error 1.5 ulp over all positive normal floats (measured against
/// f64 over 10^6 inputs: ln(1+f) carries ½ ulp into the product with log2 e).
/// Subnormal inputs count as 0 (−inf).
pub fn log2() -> Function {
    let (mut fb, a) = FnBuilder::new("log2", "log2 x; ≤ 1.5 ulp over positive normal floats", &["x"]);
    let x = a[0].clone();
    let (e, l) = reduce(&mut fb, &x);
    let y = fma(l.clone(), fbits(LOG2E_HI), fma(l, fbits(LOG2E_LO), e));
    fb.finish(specials(&x, y))
}

/// `log1p(x)` = ln(1 + x), accurate for small x: the rounding error of 1 + x is
/// recovered exactly (TwoSum) and added back as err / (1 + x). Max error 2 ulp on
/// (-1, 2^100] (measured against f64 over 10^6 inputs); x = -1 gives −inf, x < −1 NaN.
pub fn log1p(log: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("log1p", "ln(1+x); ≤ 2 ulp on (-1, 2^100]", &["x"]);
    let x = a[0].clone();
    let w = fb.let_("w", f(1.0) + x.clone());
    let bb = fb.let_("bb", w.clone() - f(1.0));
    let err = fb.let_("err", (f(1.0) - (w.clone() - bb.clone())) + (x.clone() - bb));
    let lw = fb.let_("lw", call(log, vec![w.clone()]));
    let y = fb.let_("y", fma(err, call(recip, vec![w.clone()]), lw));
    // Where 1 + x rounds to 1, ln(1+x) = x to within half an ulp.
    let y = select(w.clone().eq(f(1.0)), x.clone(), y);
    let y = select(w.eq(f(0.0)), -inf(), y);
    fb.finish(select(x.clone().eq(inf()), inf(), ftz(y)))
}
