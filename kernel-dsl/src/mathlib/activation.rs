//! Activation functions built on `exp`, `recip` and `log1p`, each arranged so that
//! no step cancels catastrophically.

use super::builder::*;
use crate::ir::Function;

/// tanh(x) = x + x³·P(x²) on |x| < 0.625 (Chebyshev fit, degree 5 in x²).
const TANH_P: [f32; 6] = [2.292_744_8e-3, -8.343_945_5e-3, 2.176_891_9e-2, -5.395_926e-2, 1.333_330_4e-1, -3.333_333_3e-1];

/// `tanh(x)`. Max error 2 ulp on [-10, 10] (measured against f64 over 10^6 inputs);
/// ±1 beyond ±9.01, odd, NaN propagates, subnormal results are 0.
pub fn tanh(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("tanh", "tanh x; ≤ 2 ulp on [-10, 10]", &["x"]);
    let x = a[0].clone();
    let ax = fb.let_("ax", abs(x.clone()));
    let t = fb.let_("t", ax.clone() * ax.clone());
    let small = fb.let_("small", fma(ax.clone() * t.clone(), horner(&t, &TANH_P), ax.clone()));
    let e = fb.let_("e", call(exp, vec![ax.clone() * f(2.0)]));
    let large = fb.let_("large", fma(f(-2.0), call(recip, vec![e + f(1.0)]), f(1.0)));
    let r = fb.let_("r", select(ax.lt(f(0.625)), small, large));
    let y = fb.let_("y", (r.bits() | sign_bit(&x)).as_f32_bits());
    fb.finish(ftz(y))
}

/// `sigmoid(x)` = 1/(1 + e^−x). Max error 2.5 ulp on [-87, 88] (measured against f64
/// over 10^6 inputs); results below 2^-126 are 0.
pub fn sigmoid(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("sigmoid", "1/(1+e^-x); ≤ 2.5 ulp on [-87, 88]", &["x"]);
    let x = a[0].clone();
    let e = fb.let_("e", call(exp, vec![-x]));
    fb.finish(call(recip, vec![f(1.0) + e]))
}

/// `softplus(x)` = ln(1 + e^x). Max error 2 ulp on [-87, 88] (measured against f64
/// over 10^6 inputs); x above 20 returns x (the difference is below half an ulp);
/// results below 2^-126 are 0.
pub fn softplus(exp: &Function, log1p: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("softplus", "ln(1+e^x); ≤ 2 ulp on [-87, 88]", &["x"]);
    let x = a[0].clone();
    let y = fb.let_("y", call(log1p, vec![call(exp, vec![x.clone()])]));
    fb.finish(select(x.clone().gt(f(20.0)), x, y))
}

/// √(2/π), the tanh-GELU constant.
const GELU_K: f32 = 0.797_884_6;
/// The cubic coefficient of the tanh-GELU.
const GELU_C: f32 = 0.044_715;

/// `gelu_tanh(x)`, the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) used by
/// GPT-2 and llama.cpp, evaluated as x·sigmoid(2u) so that the negative tail keeps its
/// relative accuracy. Max error 32 ulp on [-4, 10] (measured against the same formula
/// in f64 over 10^6 inputs). Below −4 the relative error grows with |2u| (the f32
/// rounding of u is amplified by e^{2u}'s slope: about 180 ulp at −9.4, on results
/// near 1e-32); results below 2^-126 are 0.
pub fn gelu_tanh(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("gelu_tanh", "tanh-GELU; ≤ 32 ulp on [-4, 10]", &["x"]);
    let x = a[0].clone();
    let u2 = fb.let_("u2", (x.clone() * f(2.0 * GELU_K)) * fma(f(GELU_C) * x.clone(), x.clone(), f(1.0)));
    let e = fb.let_("e", call(exp, vec![-u2]));
    let s = fb.let_("s", call(recip, vec![f(1.0) + e]));
    let y = fb.let_("y", x * s);
    fb.finish(ftz(y))
}

/// erf(x)/x = P(x²) on |x| < 1 (Chebyshev fit, degree 7 in x²; fit error 3.4e-11).
const ERF_P: [f32; 8] =
    [-9.667_044_7e-6, 1.126_595_9e-4, -8.484_080_3e-4, 5.221_031_6e-3, -2.686_543e-2, 1.128_378_2e-1, -3.761_263_8e-1, 1.128_379_2];

/// a·erfc(a)·e^{a²} = R(v), v = (1/a − 1.05)/0.95, on 0.5 ≤ a ≤ 10 (Chebyshev fit, degree
/// 17; fit error 8.9e-10). The factor a keeps R between 0.3 and 1/√π over the whole
/// range, so the f32 rounding of the coefficients costs about one ulp everywhere (a fit
/// of erfc·e^{a²} alone, which falls to 0.06, cost 8 ulp at a = 9).
#[rustfmt::skip]
const ERF_R: [f32; 18] = [
    0.0002325415553059429,
    -0.0003879690484609455,
    -0.0004943421809002757,
    0.0010778824798762798,
    0.0001124212212744169,
    -0.0005698163295164704,
    -0.0006972464616410434,
    0.001015928341075778,
    2.060125734715257e-05,
    -0.0011893659830093384,
    0.0029987460002303123,
    -0.006180640310049057,
    0.01010378822684288,
    -0.012033812701702118,
    0.004168740473687649,
    0.03294060751795769,
    -0.14322762191295624,
    0.41995474696159363,
];

/// erfc(a) for 0.5 ≤ a ≤ 10 as e^{−(p + lo)}·R(v)/a, where `p + lo` is a² exactly (`lo`
/// the rounding error of `p`, from `fma`): rounding a² once would cost a relative
/// error of a²·2⁻²⁴ (600 ulp at a = 10) through the exponential's slope.
fn erfc_tail(fb: &mut FnBuilder, a: &V, p: &V, lo: &V, exp: &Function, recip: &Function) -> V {
    let e0 = fb.let_("e0", call(exp, vec![-p.clone()]));
    let e = fb.let_("e", fma(-e0.clone(), lo.clone(), e0));
    let w = fb.let_("w", call(recip, vec![a.clone()]));
    let v = fb.let_("v", fma(w.clone(), f(1.0 / 0.95), f(-1.05 / 0.95)));
    (e * horner(&v, &ERF_R)) * w
}

/// `erf(x)`: x·P(x²) below 1, 1 − erfc(|x|) from 1 to 4 (e^{−x²} with x² split exactly),
/// 1 beyond (erfc(4) < 2⁻²⁵), odd. Max error 2.5 ulp on [-5, 5] (measured against f64
/// over 10^6 inputs); NaN propagates; subnormal results are 0.
pub fn erf(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("erf", "erf x; ≤ 2.5 ulp on [-5, 5]", &["x"]);
    let x = a[0].clone();
    let ax = fb.let_("ax", abs(x.clone()));
    let t = fb.let_("t", ax.clone() * ax.clone());
    let lo = fb.let_("lo", fma(ax.clone(), ax.clone(), -t.clone()));
    let small = fb.let_("small", ax.clone() * horner(&t, &ERF_P));
    let tail = erfc_tail(&mut fb, &ax, &t, &lo, exp, recip);
    let large = fb.let_("large", f(1.0) - tail);
    let r = fb.let_("r", select(ax.clone().lt(f(1.0)), small, select(ax.lt(f(4.0)), large, f(1.0))));
    let y = fb.let_("y", select(is_nan(&x), x.clone(), (r.bits() | sign_bit(&x)).as_f32_bits()));
    fb.finish(ftz(y))
}

/// `gelu_erf(x)` = 0.5·x·(1 + erf(x/√2)), PyTorch's default GELU, evaluated as
/// 0.5·x·erfc(|x|/√2) for negative x and 0.5·x·(2 − erfc(x/√2)) otherwise, so the
/// negative tail keeps its relative accuracy; erfc from the tail form from |x|/√2 = 0.5
/// (below, 1 − erf cancels less than a bit), x²/2 split exactly for the exponential.
/// Max error 5 ulp on [-13, 10] (measured against f64 over 10^6 inputs); results below
/// 2^-126 are 0.
pub fn gelu_erf(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("gelu_erf", "erf-GELU; ≤ 5 ulp on [-13, 10]", &["x"]);
    let x = a[0].clone();
    let az = fb.let_("az", abs(x.clone()) * f(std::f32::consts::FRAC_1_SQRT_2));
    let xx = fb.let_("xx", x.clone() * x.clone());
    let p = fb.let_("p", xx.clone() * f(0.5));
    let lo = fb.let_("lo", fma(x.clone(), x.clone(), -xx) * f(0.5));
    let tail = erfc_tail(&mut fb, &az, &p, &lo, exp, recip);
    let small = fb.let_("small", fma(-az.clone(), horner(&(az.clone() * az.clone()), &ERF_P), f(1.0)));
    // erfc(|x|/√2); past |x|/√2 = 10 it is below 2⁻¹⁴⁵ (and a² no longer splits).
    let c = fb.let_("c", select(az.clone().lt(f(0.5)), small, select(az.lt(f(10.0)), tail, f(0.0))));
    let s = fb.let_("s", select(x.clone().lt(f(0.0)), c.clone(), f(2.0) - c));
    fb.finish(ftz((x * f(0.5)) * s))
}
