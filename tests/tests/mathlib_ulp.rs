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
        "gelu" => {
            let u = 0.797_884_560_802_865_4 * (x + 0.044715 * x * x * x);
            x / (1.0 + (-2.0 * u).exp())
        }
        other => panic!("no reference for {other}"),
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
