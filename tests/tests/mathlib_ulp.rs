//! The portable math library against f64: each function's documented ULP bound holds
//! over 10^6 random inputs of its domain, and no function ever returns a subnormal.

use onekernel_dsl::mathlib::{Domain, BOUNDS};
use onekernel_runtime::cpu::eval_function;
use onekernel_tests::{ulp_error, Rng};

const SAMPLES: usize = 1_000_000;

fn reference(name: &str, a: &[f64]) -> f64 {
    let x = a[0];
    match name {
        "exp2" => x.exp2(),
        "exp" => x.exp(),
        "recip" => 1.0 / x,
        "div" => x / a[1],
        "rsqrt" => 1.0 / x.sqrt(),
        "sqrt" => x.sqrt(),
        "log" => x.ln(),
        "log2" => x.log2(),
        "log1p" => x.ln_1p(),
        "tanh" => x.tanh(),
        "sigmoid" => 1.0 / (1.0 + (-x).exp()),
        "softplus" => x.exp().ln_1p(),
        // The same formula, in the cancellation-free form 0.5(1 + tanh u) = 1/(1 + e^-2u).
        "erf" => erf_f64(x),
        // 0.5·x·erfc(−x/√2), with erfc evaluated without cancellation on either side.
        "gelu_erf" => 0.5 * x * erfc_f64(-x * std::f64::consts::FRAC_1_SQRT_2),
        "gelu_tanh" => {
            let u = 0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x);
            x / (1.0 + (-2.0 * u).exp())
        }
        other => panic!("no reference for {other}"),
    }
}

/// erf in f64: the everywhere-convergent series of positive terms
/// erf(x) = 2/√π·e^{−x²}·Σ 2ⁿx^{2n+1}/(1·3·…·(2n+1)) below 2, 1 − erfc beyond.
fn erf_f64(x: f64) -> f64 {
    if x.abs() >= 2.0 {
        return x.signum() * (1.0 - erfc_f64(x.abs()));
    }
    let (mut term, mut sum, mut n) = (x, x, 0.0);
    while term.abs() > 1e-18 * sum.abs() {
        n += 1.0;
        term *= 2.0 * x * x / (2.0 * n + 1.0);
        sum += term;
    }
    2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum
}

/// erfc in f64: 1 − erf below 2 (erfc ≥ 0.0047 there, so relative error stays below
/// 1e-13), the continued fraction e^{−x²}/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …))))
/// from 2 (modified Lentz, 300 terms), and 2 − erfc(−x) for negative x.
fn erfc_f64(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 - erfc_f64(-x);
    }
    if x < 2.0 {
        return 1.0 - erf_f64(x);
    }
    let tiny = 1e-300;
    let (mut fr, mut c, mut d) = (x, x, 0.0);
    for k in 1..300 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        fr *= c * d;
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / fr
}

#[test]
fn the_erf_reference_meets_known_values() {
    // erf(0.5), erf(1), erf(2.5), erfc(3), erfc(6) to 15 digits.
    for (got, want) in [
        (erf_f64(0.5), 0.520_499_877_813_046_5),
        (erf_f64(1.0), 0.842_700_792_949_714_9),
        (erf_f64(2.5), 0.999_593_047_982_555),
        (erfc_f64(3.0), 2.209_049_699_858_544e-5),
        (erfc_f64(6.0), 2.151_973_671_249_891_3e-17),
        (erfc_f64(-1.0), 1.842_700_792_949_715),
    ] {
        assert!((got - want).abs() <= 1e-14 * want.abs(), "{got} vs {want}");
    }
}

fn sample(rng: &mut Rng, d: Domain) -> f32 {
    match d {
        Domain::Uniform(lo, hi) => rng.range(lo, hi) as f32,
        Domain::PositiveNormal | Domain::Normal => {
            let exp = 1 + rng.below(254);
            let sign = if d == Domain::Normal { rng.next_u32() & 0x8000_0000 } else { 0 };
            f32::from_bits(sign | (exp << 23) | (rng.next_u32() & 0x007f_ffff))
        }
    }
}

#[test]
fn every_function_meets_its_documented_ulp_bound() {
    let mut failures = Vec::new();
    for (k, b) in BOUNDS.iter().enumerate() {
        let mut rng = Rng::new(0x5eed_0000 + k as u64);
        let inputs: Vec<Vec<f32>> = (0..b.arity).map(|_| (0..SAMPLES).map(|_| sample(&mut rng, b.domain)).collect()).collect();
        let refs: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
        let out = eval_function(b.name, &refs).expect("library function runs");
        let mut worst = (0.0f64, 0usize);
        for (i, &y) in out.iter().enumerate() {
            let args: Vec<f64> = inputs.iter().map(|v| v[i] as f64).collect();
            let e = ulp_error(y, reference(b.name, &args));
            if e > worst.0 {
                worst = (e, i);
            }
        }
        let args: Vec<f32> = inputs.iter().map(|v| v[worst.1]).collect();
        println!("{:>9}: max {:.3} ulp (bound {}) at {:?} -> {:e}", b.name, worst.0, b.max_ulp, args, out[worst.1]);
        if worst.0 > b.max_ulp {
            failures.push(format!("{}: {:.3} ulp > {} at {:?}", b.name, worst.0, b.max_ulp, args));
        }
    }
    assert!(failures.is_empty(), "bounds exceeded:\n{}", failures.join("\n"));
}

#[test]
fn no_function_returns_a_subnormal() {
    let mut rng = Rng::new(42);
    for b in BOUNDS {
        // Arbitrary bit patterns: every exponent, subnormals, infinities and NaNs.
        let inputs: Vec<Vec<f32>> = (0..b.arity).map(|_| (0..200_000).map(|_| f32::from_bits(rng.next_u32())).collect()).collect();
        let refs: Vec<&[f32]> = inputs.iter().map(|v| v.as_slice()).collect();
        let out = eval_function(b.name, &refs).unwrap();
        for (i, y) in out.iter().enumerate() {
            assert!(!y.is_subnormal(), "{}({:?}) = {y:e} is subnormal", b.name, inputs.iter().map(|v| v[i]).collect::<Vec<_>>());
        }
    }
}

#[test]
fn special_values() {
    let f = |name: &str, x: f32| eval_function(name, &[&[x]]).unwrap()[0];
    assert_eq!(f("exp", f32::NEG_INFINITY), 0.0);
    assert_eq!(f("exp", f32::INFINITY), f32::INFINITY);
    assert!(f("exp", f32::NAN).is_nan());
    assert_eq!(f("exp2", 3.0), 8.0);
    assert_eq!(f("exp2", -126.0), f32::MIN_POSITIVE);
    assert_eq!(f("exp2", -126.5), 0.0, "would be subnormal: flushed");
    assert_eq!(f("log", 1.0), 0.0);
    assert_eq!(f("log", 0.0), f32::NEG_INFINITY);
    assert!(f("log", -1.0).is_nan());
    assert_eq!(f("log2", 1024.0), 10.0);
    assert_eq!(f("sqrt", 4.0), 2.0);
    assert_eq!(f("sqrt", -0.0).to_bits(), (-0.0f32).to_bits());
    assert!(f("sqrt", -4.0).is_nan());
    assert_eq!(f("rsqrt", 0.25), 2.0);
    assert_eq!(f("recip", 0.0), f32::INFINITY);
    assert_eq!(f("recip", -0.0), f32::NEG_INFINITY);
    assert_eq!(f("recip", f32::INFINITY), 0.0);
    assert_eq!(f("tanh", 0.0), 0.0);
    assert_eq!(f("tanh", 20.0), 1.0);
    assert_eq!(f("tanh", -20.0), -1.0);
    assert_eq!(f("sigmoid", 0.0), 0.5);
    assert_eq!(f("log1p", -1.0), f32::NEG_INFINITY);
    assert_eq!(f("softplus", 100.0), 100.0);
    let d = |a: f32, b: f32| eval_function("div", &[&[a], &[b]]).unwrap()[0];
    assert_eq!(d(1.0, 4.0), 0.25);
    assert_eq!(d(-6.0, 3.0), -2.0);
    assert!(d(0.0, 0.0).is_nan());
    assert!(d(f32::INFINITY, f32::INFINITY).is_nan());
    assert_eq!(d(1.0, 0.0), f32::INFINITY);
    assert_eq!(d(-1.0, f32::INFINITY).to_bits(), (-0.0f32).to_bits());
    assert_eq!(d(f32::MAX, f32::MAX), 1.0, "no intermediate overflow");
    assert_eq!(d(f32::MIN_POSITIVE, f32::MIN_POSITIVE), 1.0, "no intermediate underflow");
}
