//! `recip`, `div`, `rsqrt`, `sqrt`: Newton iterations with `fma` on the mantissa,
//! the exponent handled in integer arithmetic, so no step ever sees a subnormal.

use super::builder::*;
use crate::ir::Function;
use crate::types::Scalar;

/// The mantissa of a normal `x` as a float in [1, 2).
fn mantissa(x: &V) -> V {
    ((x.clone().bits() & u(0x007f_ffff)) | u(0x3f80_0000)).as_f32_bits()
}

/// Unbiased exponent of a normal `x`, as i32.
fn exponent(x: &V) -> V {
    exp_field(x).cast(Scalar::I32) - i(127)
}

/// 1/m for m in [1, 2): linear seed 24/17 − 8/17·m (error ≤ 1/17), three Newton steps.
fn recip_mantissa(fb: &mut FnBuilder, m: &V) -> V {
    let mut y = fb.let_("y0", fma(f(-8.0 / 17.0), m.clone(), f(24.0 / 17.0)));
    for step in 1..=3 {
        let e = fb.let_(&format!("e{step}"), fma(-m.clone(), y.clone(), f(1.0)));
        y = fb.let_(&format!("y{step}"), fma(y.clone(), e, y));
    }
    y
}

/// `recip(x)` = 1/x. Max error 1 ulp over all normal floats (measured against f64 over
/// 10^6 inputs). ±0 and subnormals give ±inf, ±inf gives ±0, results below 2^-126 are
/// ±0, NaN propagates.
pub fn recip() -> Function {
    let (mut fb, a) = FnBuilder::new("recip", "1/x; ≤ 1 ulp; subnormal in or out counts as 0", &["x"]);
    let x = a[0].clone();
    let m = fb.let_("m", mantissa(&x));
    let y = recip_mantissa(&mut fb, &m);
    let k = fb.let_("k", -exponent(&x));
    let scaled = scale(&mut fb, y, k);
    let scaled = fb.let_("scaled", scaled);
    let r = fb.let_("r", ftz(scaled).bits() | sign_bit(&x));
    let r = r.as_f32_bits();
    let ex = exp_field(&x);
    let signed_inf = (inf().bits() | sign_bit(&x)).as_f32_bits();
    let signed_zero = sign_bit(&x).as_f32_bits();
    let r = select(ex.clone().eq(u(0)), signed_inf, r);
    let r = select(ex.eq(u(255)), signed_zero, r);
    fb.finish(select(is_nan(&x), x, r))
}

/// `div(a, b)` = a/b, what the DSL's f32 `/` lowers to. Max error 1 ulp over all
/// normal operands whose quotient is normal (measured against f64 over 10^6 inputs).
/// Subnormal operands count as 0; quotients below 2^-126 are 0; IEEE special cases
/// otherwise (0/0, inf/inf → NaN; x/0 → ±inf; x/inf → ±0).
pub fn div() -> Function {
    let (mut fb, a) = FnBuilder::new("div", "a/b; ≤ 1 ulp; subnormal in or out counts as 0", &["a", "b"]);
    let (x, d) = (a[0].clone(), a[1].clone());
    let ma = fb.let_("ma", mantissa(&x));
    let mb = fb.let_("mb", mantissa(&d));
    let y = recip_mantissa(&mut fb, &mb);
    let q0 = fb.let_("q0", ma.clone() * y.clone());
    let rr = fb.let_("rr", fma(-mb, q0.clone(), ma));
    let q = fb.let_("q", fma(rr, y, q0));
    // q is in (1/2, 2): clamping the exponent keeps both scale steps normal without
    // changing a result that is 0 or inf anyway.
    let k = fb.let_("k", clamp(exponent(&x) - exponent(&d), i(-160), i(130)));
    let sign = fb.let_("sign", sign_bit(&x) ^ sign_bit(&d));
    let scaled = scale(&mut fb, q, k);
    let scaled = fb.let_("scaled", scaled);
    let r = fb.let_("r", (ftz(scaled).bits() | sign.clone()).as_f32_bits());
    let (ea, eb) = (exp_field(&x), exp_field(&d));
    let a_zero = fb.let_("a_zero", ea.clone().eq(u(0)));
    let b_zero = fb.let_("b_zero", eb.clone().eq(u(0)));
    let a_inf = fb.let_("a_inf", ea.eq(u(255)));
    let b_inf = fb.let_("b_inf", eb.eq(u(255)));
    let signed_inf = (inf().bits() | sign.clone()).as_f32_bits();
    let signed_zero = sign.as_f32_bits();
    let r = select(a_zero.clone().or(b_inf.clone()), signed_zero, r);
    let r = select(b_zero.clone().or(a_inf.clone()), signed_inf, r);
    let bad = (a_zero.clone().and(b_zero)).or(a_inf.and(b_inf));
    let bad = bad.or(is_nan(&x)).or(is_nan(&d));
    fb.finish(select(bad, nan(), r))
}

/// Shared core of `rsqrt` and `sqrt` for a positive normal x = m · 4^k, m in [1, 4):
/// returns (m, 1/√m, k).
fn rsqrt_core(fb: &mut FnBuilder, x: &V) -> (V, V, V) {
    let e = fb.let_("e", exponent(x));
    let odd = fb.let_("odd", e.clone() & i(1));
    let m = fb.let_("m", ((x.clone().bits() & u(0x007f_ffff)) | ((odd.clone() + i(127)).cast(Scalar::U32) << u(23))).as_f32_bits());
    let k = fb.let_("k", (e - odd) >> u(1));
    // The classic bit-trick seed (error ≤ 3.5 %), then three Newton steps.
    let mut y = fb.let_("y0", (u(0x5f37_59df) - (m.clone().bits() >> u(1))).as_f32_bits());
    for step in 1..=3 {
        let my = fb.let_(&format!("my{step}"), m.clone() * y.clone());
        let r = fb.let_(&format!("r{step}"), fma(-my, y.clone(), f(1.0)));
        y = fb.let_(&format!("y{step}"), fma(y.clone() * f(0.5), r, y));
    }
    (m, y, k)
}

/// `rsqrt(x)` = 1/√x. Max error 1 ulp over all positive normal floats (measured
/// against f64 over 10^6 inputs). ±0 and subnormals give ±inf, +inf gives 0, negative
/// inputs and NaN give NaN.
pub fn rsqrt() -> Function {
    let (mut fb, a) = FnBuilder::new("rsqrt", "1/sqrt(x); ≤ 1 ulp over positive normal floats", &["x"]);
    let x = a[0].clone();
    let (_m, y, k) = rsqrt_core(&mut fb, &x);
    let r = fb.let_("r", y * pow2(-k));
    let ex = exp_field(&x);
    let r = select(ex.clone().eq(u(255)), f(0.0), r);
    let r = select(ex.eq(u(0)), (inf().bits() | sign_bit(&x)).as_f32_bits(), r);
    let neg = x.clone().lt(f(0.0)).or(is_nan(&x));
    fb.finish(select(neg, nan(), r))
}

/// `sqrt(x)`. Max error 1 ulp over all positive normal floats (measured against f64
/// over 10^6 inputs). ±0 and subnormals give ±0, +inf gives +inf, negative inputs and
/// NaN give NaN.
pub fn sqrt() -> Function {
    let (mut fb, a) = FnBuilder::new("sqrt", "sqrt(x); ≤ 1 ulp over positive normal floats", &["x"]);
    let x = a[0].clone();
    let (m, y, k) = rsqrt_core(&mut fb, &x);
    let s = fb.let_("s", m.clone() * y.clone());
    let d = fb.let_("d", fma(-s.clone(), s.clone(), m));
    let s = fb.let_("s2", fma(d, y * f(0.5), s));
    let r = fb.let_("res", s * pow2(k));
    let ex = exp_field(&x);
    let r = select(ex.clone().eq(u(255)), x.clone(), r);
    let r = select(ex.eq(u(0)), sign_bit(&x).as_f32_bits(), r);
    let neg = x.clone().lt(f(0.0)).or(is_nan(&x));
    fb.finish(select(neg, nan(), r))
}
