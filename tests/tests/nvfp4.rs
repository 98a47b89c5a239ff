//! NVFP4 on every backend present (the interpreter, lavapipe and msl-emu in CI, CUDA and
//! NVIDIA Vulkan on the GPU machine), every GPU backend bitwise equal to the interpreter:
//! * the quantization kernels (global scale from the data) equal the host encoder bit
//!   for bit — packed values, block scales, global scale — and so does dequantization;
//! * the round trip stays within the format's bound (a sixth of the block's largest
//!   magnitude, times the scale's rounding);
//! * the negative control: max |x| = 7956 quantized with a stale static global scale of
//!   0.000251 saturates every block scale and loses most of the magnitude;
//! * GEMV with NVFP4 weights against float64 over the dequantized operands, for f32,
//!   bf16 and NVFP4 activations;
//! * bad input rejected before launch with the argument named.

use onekernel_ops::nvfp4::codec::{self, Nvfp4};
use onekernel_ops::nvfp4::{Activation, GlobalScale};
use onekernel_ops::{CallError, Device};
use onekernel_tests::harness::{manifest, on_every_backend, root};
use onekernel_tests::{bits, uniform};

/// Activations with a spread of magnitudes, a block of zeros and a lone outlier.
fn activations(seed: u64, rows: usize, cols: usize) -> Vec<f32> {
    let mut x = uniform(seed, rows * cols, -3.0, 3.0);
    for (i, v) in x.iter_mut().enumerate() {
        *v *= [1.0, 0.01, 40.0, 1e-3][(i / 16) % 4];
    }
    x[16..32].fill(0.0);
    x[100] = 7956.0;
    x
}

#[test]
fn kernels_quantize_and_dequantize_exactly_as_the_host_encoder() {
    let (rows, cols) = (33, 256);
    let x = activations(1, rows, cols);
    let got = on_every_backend("quantize", |d| d.nvfp4_quantize(&x, rows, cols, GlobalScale::FromData).unwrap());
    let want = codec::quantize(&x, rows, cols, codec::global_scale(&x));
    assert_eq!(got.global.to_bits(), want.global.to_bits(), "global scale");
    assert_eq!(got.scales, want.scales, "block scales");
    assert_eq!(got.packed, want.packed, "packed values");
    let y = on_every_backend("dequantize", |d| bits(&d.nvfp4_dequantize(&got).unwrap()));
    assert_eq!(y, bits(&codec::dequantize(&want)));
    // The format's bound, block by block: where the block scale is a normal E4M3
    // number, half of E2M1's widest step (1, between 4 and 6) in units of the block's
    // scale, which is bmax/6 within E4M3's rounding (1/16); a block four decades below the
    // tensor's largest value has a subnormal or zero scale (E4M3 spans 2⁻⁹ … 448), which
    // the format cannot avoid with one global scale: counted, and bounded by bmax.
    let y: Vec<f32> = y.into_iter().map(f32::from_bits).collect();
    let (mut err2, mut ref2, mut worst, mut coarse) = (0.0f64, 0.0f64, 0.0f64, 0);
    for ((xb, yb), &sc) in x.chunks(16).zip(y.chunks(16)).zip(&got.scales) {
        let bmax = xb.iter().fold(0.0f32, |m, v| m.max(v.abs())) as f64;
        let normal = sc >= 8;
        coarse += !normal as usize;
        for (&a, &b) in xb.iter().zip(yb) {
            let e = (a as f64 - b as f64).abs();
            let bound = if normal { bmax / 6.0 * 1.0625 } else { bmax };
            assert!(e <= bound + 1e-30, "{a} → {b} (block max {bmax}, scale code {sc:#x})");
            if normal {
                worst = worst.max(e / bmax);
            }
            err2 += e * e;
            ref2 += (a as f64).powi(2);
        }
    }
    assert!(coarse < got.scales.len(), "every block has a subnormal scale");
    println!(
        "NVFP4 round trip with the data's scale: NMSE {:.2e}; worst error {:.3} of the block's largest magnitude where its scale is normal; {coarse} of {} blocks (those 10⁴ and more below the outlier) have a subnormal or zero scale",
        err2 / ref2,
        worst,
        got.scales.len()
    );
}

#[test]
fn a_stale_static_scale_saturates_every_block_and_the_data_scale_does_not() {
    // The seed's case: an activation reaching 7956 and a checkpoint's static scale of
    // 0.000251 (calibrated for a far smaller range).
    let (rows, cols) = (4, 512);
    let mut x = uniform(7, rows * cols, -300.0, 300.0);
    x[37] = 7956.0;
    let loss = |t: &Nvfp4| {
        let y = codec::dequantize(t);
        let (a, b): (f64, f64) = x.iter().zip(&y).fold((0.0, 0.0), |(a, b), (u, v)| (a + (*u as f64).abs(), b + (*v as f64).abs()));
        1.0 - b / a
    };
    let stale = on_every_backend("static scale", |d| d.nvfp4_quantize(&x, rows, cols, GlobalScale::Static(0.000251)).unwrap());
    assert!(stale.scales.iter().all(|&s| s == 0x7e), "every block scale saturates at 448");
    let stale_loss = loss(&stale);
    let fresh = on_every_backend("data scale", |d| d.nvfp4_quantize(&x, rows, cols, GlobalScale::FromData).unwrap());
    let fresh_loss = loss(&fresh);
    println!("magnitude lost: stale static scale {:.1} %, the data's scale {:.2} %", 100.0 * stale_loss, 100.0 * fresh_loss);
    assert!(stale_loss > 0.9, "{stale_loss}");
    assert!(fresh_loss.abs() < 0.05, "{fresh_loss}");
    assert!(fresh.scales.iter().all(|&s| s < 0x7e) || fresh.scales.contains(&0x7e));
}

#[test]
fn gemv_matches_float64_for_f32_bf16_and_nvfp4_activations() {
    let (rows, cols) = (24, 1040);
    let wx = uniform(11, rows * cols, -1.0, 1.0);
    let w = codec::quantize(&wx, rows, cols, codec::global_scale(&wx));
    let wd = codec::dequantize(&w);
    let x = uniform(12, cols, -2.0, 2.0);
    let xb: Vec<f32> = x.iter().map(|&v| onekernel_dsl::half::bf16_to_f32(onekernel_dsl::half::f32_to_bf16(v))).collect();
    let xq = codec::quantize(&x, 1, cols, codec::global_scale(&x));
    let xd = codec::dequantize(&xq);
    for (name, act, xv) in [("f32", Activation::F32(&x), &x), ("bf16", Activation::Bf16(&x), &xb), ("nvfp4", Activation::Nvfp4(&xq), &xd)] {
        let y = on_every_backend(name, |d| bits(&d.nvfp4_gemv(&w, act).unwrap()));
        let mut worst = 0.0f64;
        for (r, &yb) in y.iter().enumerate() {
            let row = &wd[r * cols..][..cols];
            let want: f64 = row.iter().zip(xv.iter()).map(|(a, b)| *a as f64 * *b as f64).sum();
            let scale: f64 = row.iter().zip(xv.iter()).map(|(a, b)| (*a as f64 * *b as f64).abs()).sum();
            worst = worst.max((f32::from_bits(yb) as f64 - want).abs() / scale);
        }
        println!("nvfp4_gemv with {name} activations: within {worst:.2e} of float64 (relative to Σ|w·x|)");
        assert!(worst < 1e-6, "{name}: {worst}");
    }
}

#[test]
fn bad_input_is_rejected_before_launch_naming_the_argument() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut cpu = onekernel_tests::harness::cpu();
    let mut d = Device::new(&mut cpu, &m, &artifacts);
    let arg = |r: Result<(), CallError>| match r {
        Err(CallError::Invalid { argument, .. }) => argument,
        other => panic!("{other:?}"),
    };
    assert_eq!(arg(d.nvfp4_quantize(&[0.0; 24], 1, 24, GlobalScale::FromData).map(|_| ())), "cols");
    assert_eq!(arg(d.nvfp4_quantize(&[0.0; 31], 2, 16, GlobalScale::FromData).map(|_| ())), "x");
    let mut nan = vec![1.0; 16];
    nan[3] = f32::NAN;
    assert_eq!(arg(d.nvfp4_quantize(&nan, 1, 16, GlobalScale::FromData).map(|_| ())), "x");
    assert_eq!(arg(d.nvfp4_quantize(&[1.0; 16], 1, 16, GlobalScale::Static(0.0)).map(|_| ())), "scale");
    let w = codec::quantize(&[1.0; 64], 2, 32, 0.01);
    assert_eq!(arg(d.nvfp4_gemv(&w, Activation::F32(&[1.0; 16])).map(|_| ())), "x");
    let short = Nvfp4 { packed: vec![0; 3], ..w.clone() };
    assert_eq!(arg(d.nvfp4_dequantize(&short).map(|_| ())), "t");
    assert_eq!(arg(d.nvfp4_gemv(&short, Activation::F32(&[1.0; 32])).map(|_| ())), "w");
}
