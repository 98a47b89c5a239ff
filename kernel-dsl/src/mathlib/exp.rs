//! `exp2` and `exp`: range reduction to a small remainder, a polynomial, and the power
//! of two assembled from exponent bits.

use super::builder::*;
use crate::ir::Function;
use crate::types::Scalar;

/// 2^f = 1 + f·P(f) on |f| ≤ 1/2 (Chebyshev fit, degree 6).
const EXP2_P: [f32; 7] = [1.529_732_4e-5, 1.546_144_4e-4, 1.333_350_2e-3, 9.618_056_7e-3, 5.550_410_8e-2, 2.402_265_1e-1, 6.931_471_8e-1];

/// e^r = 1 + r + r²·Q(r) on |r| ≤ ln2/2 (Chebyshev fit of Q, degree 4), written out as
/// one polynomial so that Horner with `fma` ends in a single rounding of `1 + r·(…)`.
const EXP_P: [f32; 7] = [1.392_617_6e-3, 8.363_173e-3, 4.166_655_5e-2, 1.666_657_7e-1, 0.5, 1.0, 1.0];

/// ln 2 split so that `n · LN2_HI` is exact for |n| < 2^9.
const LN2_HI: u32 = 0x3f31_7200;
const LN2_LO: u32 = 0x35bf_be8e;

/// `exp2(x)` = 2^x. Max error 1 ulp on [-126, 128) (measured against f64 over 10^6
/// inputs). Below -126 the result would be subnormal and is 0; ≥ 128 gives +inf; NaN
/// propagates.
pub fn exp2() -> Function {
    let (mut fb, a) = FnBuilder::new("exp2", "2^x; ≤ 1 ulp on [-126, 128); 0 below -126", &["x"]);
    let x = a[0].clone();
    let xc = fb.let_("xc", clamp(x.clone(), f(-127.0), f(128.0)));
    let r = fb.let_("r", round_int(xc.clone()));
    let fr = fb.let_("f", xc.clone() - r.clone());
    let p = fb.let_("p", fma(fr.clone(), horner(&fr, &EXP2_P), f(1.0)));
    let n = fb.let_("n", r.cast(Scalar::I32));
    let y = scale(&mut fb, p, n);
    let y = fb.let_("y", select(xc.lt(f(-126.0)), f(0.0), y));
    let y = select(x.clone().ge(f(128.0)), inf(), y);
    fb.finish(select(is_nan(&x), x, y))
}

/// `exp(x)` = e^x. Max error 1 ulp on [-87.3, 88.7] (measured against f64 over 10^6
/// inputs). Results below 2^-126 are 0; overflow gives +inf; NaN propagates.
pub fn exp() -> Function {
    let (mut fb, a) = FnBuilder::new("exp", "e^x; ≤ 1 ulp on [-87.3, 88.7]; 0 where e^x < 2^-126", &["x"]);
    let x = a[0].clone();
    let xc = fb.let_("xc", clamp(x.clone(), f(-104.0), f(89.0)));
    let nf = fb.let_("nf", round_int(xc.clone() * f(std::f32::consts::LOG2_E)));
    let r = fb.let_("r", fma(-nf.clone(), fbits(LN2_HI), xc));
    let r = fb.let_("r2", fma(-nf.clone(), fbits(LN2_LO), r));
    let p = fb.let_("p", horner(&r, &EXP_P));
    let n = fb.let_("n", nf.cast(Scalar::I32));
    let y = scale(&mut fb, p, n);
    let y = fb.let_("scaled", y);
    let y = fb.let_("y", ftz(y));
    fb.finish(select(is_nan(&x), x, y))
}
