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

/// `gelu(x)`, the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) used by
/// GPT-2 and llama.cpp, evaluated as x·sigmoid(2u) so that the negative tail keeps its
/// relative accuracy. Max error 32 ulp on [-4, 10] (measured against the same formula
/// in f64 over 10^6 inputs). Below −4 the relative error grows with |2u| (the f32
/// rounding of u is amplified by e^{2u}'s slope: about 180 ulp at −9.4, on results
/// near 1e-32); results below 2^-126 are 0.
pub fn gelu(exp: &Function, recip: &Function) -> Function {
    let (mut fb, a) = FnBuilder::new("gelu", "tanh-GELU; ≤ 32 ulp on [-4, 10]", &["x"]);
    let x = a[0].clone();
    let u2 = fb.let_("u2", (x.clone() * f(2.0 * GELU_K)) * fma(f(GELU_C) * x.clone(), x.clone(), f(1.0)));
    let e = fb.let_("e", call(exp, vec![-u2]));
    let s = fb.let_("s", call(recip, vec![f(1.0) + e]));
    let y = fb.let_("y", x * s);
    fb.finish(ftz(y))
}
