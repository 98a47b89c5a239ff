//! The catalogue's small real kernels, run on the interpreter, against plain-Rust f64
//! references (not through the DSL).

use onekernel_dsl::half::{f16_to_f32, f32_to_f16};
use onekernel_runtime::{cpu, Args, HostBuffer};
use onekernel_tests::Rng;

fn rms_norm_f64(x: &[f32], w: &[f32], cols: usize, eps: f32) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let ms: f64 = row.iter().map(|&v| (v as f64) * (v as f64)).sum::<f64>() / cols as f64;
            let s = 1.0 / (ms + eps as f64).sqrt();
            row.iter().zip(w).map(move |(&v, &g)| v as f64 * s * g as f64).collect::<Vec<_>>()
        })
        .collect()
}

fn rel_err(got: f32, want: f64) -> f64 {
    ((got as f64) - want).abs() / want.abs().max(1e-30)
}

#[test]
fn rms_norm_f32_matches_f64() {
    let kernels = onekernel_kernels::norm::rms_norm().unwrap();
    let k = kernels.iter().find(|k| k.name == "rms_norm_f32").unwrap();
    let mut rng = Rng::new(7);
    for (rows, cols) in [(1usize, 1usize), (3, 100), (2, 256), (4, 1000), (1, 4096)] {
        let x = rng.f32_vec(rows * cols, -3.0, 3.0);
        let w = rng.f32_vec(cols, 0.5, 1.5);
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(&x))
            .buffer("w", HostBuffer::from_f32(&w))
            .buffer("y", HostBuffer::zeros(onekernel_dsl::types::StorageType::F32, rows * cols))
            .scalar("n_cols", cols as u32)
            .scalar("eps", 1e-6f32);
        cpu::run(k, &mut args, [rows as u32, 1, 1]).unwrap();
        let y = args.get_buffer("y").unwrap().to_f32();
        let want = rms_norm_f64(&x, &w, cols, 1e-6);
        let worst = y.iter().zip(&want).map(|(&g, &r)| rel_err(g, r)).fold(0.0, f64::max);
        assert!(worst < 4e-6, "{rows}x{cols}: max relative error {worst:e}");
    }
}

#[test]
fn rms_norm_f16_matches_f64_within_half_precision() {
    let kernels = onekernel_kernels::norm::rms_norm().unwrap();
    let k = kernels.iter().find(|k| k.name == "rms_norm_f16").unwrap();
    let mut rng = Rng::new(8);
    let (rows, cols) = (3usize, 333usize);
    let x: Vec<f32> = rng.f32_vec(rows * cols, -2.0, 2.0).into_iter().map(|v| f16_to_f32(f32_to_f16(v))).collect();
    let w = rng.f32_vec(cols, 0.5, 1.5);
    let mut args = Args::new()
        .buffer("x", HostBuffer::f16_from_f32(&x))
        .buffer("w", HostBuffer::from_f32(&w))
        .buffer("y", HostBuffer::zeros(onekernel_dsl::types::StorageType::F16, rows * cols))
        .scalar("n_cols", cols as u32)
        .scalar("eps", 1e-5f32);
    cpu::run(k, &mut args, [rows as u32, 1, 1]).unwrap();
    let y = args.get_buffer("y").unwrap().to_f32();
    for (g, r) in y.iter().zip(rms_norm_f64(&x, &w, cols, 1e-5)) {
        // One f16 rounding of an accurate f32 value: within 2^-11 relative (+ f32 error).
        assert!(rel_err(*g, r) <= 2f64.powi(-11) * 1.01, "{g} vs {r}");
    }
}

#[test]
fn softmax_rows_matches_f64() {
    let k = onekernel_kernels::softmax::softmax_rows().unwrap();
    let mut rng = Rng::new(9);
    for (rows, cols, scale) in [(1usize, 5usize, 1.0f32), (4, 128, 0.125), (2, 1000, 0.5), (1, 3000, 2.0)] {
        let x = rng.f32_vec(rows * cols, -8.0, 8.0);
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(&x))
            .buffer("y", HostBuffer::zeros(onekernel_dsl::types::StorageType::F32, rows * cols))
            .scalar("n_cols", cols as u32)
            .scalar("scale", scale);
        cpu::run(&k, &mut args, [rows as u32, 1, 1]).unwrap();
        let y = args.get_buffer("y").unwrap().to_f32();
        for (r, (xr, yr)) in x.chunks(cols).zip(y.chunks(cols)).enumerate() {
            let m = xr.iter().map(|&v| (v * scale) as f64).fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = xr.iter().map(|&v| ((v * scale) as f64 - m).exp()).collect();
            let s: f64 = e.iter().sum();
            for (g, ei) in yr.iter().zip(&e) {
                let want = ei / s;
                assert!(((*g as f64) - want).abs() <= 1e-6 * want.max(1e-3), "row {r}: {g} vs {want}");
            }
            let total: f32 = yr.iter().sum();
            assert!((total - 1.0).abs() < 1e-4, "row {r} sums to {total}");
        }
    }
}

#[test]
fn catalogue_lists_and_loads_every_kernel() {
    let names: Vec<&str> = onekernel_kernels::all().iter().map(|e| e.name).collect();
    for want in ["rms_norm_f16", "rms_norm_f32", "softmax_rows"] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "catalogue is sorted");
    for e in onekernel_kernels::all() {
        let k = e.load().unwrap();
        assert!(k.source.file.ends_with(".rs"), "{}", k.source.file);
        assert_eq!(k.source.hash.len(), 16);
    }
}

#[test]
fn the_interpreter_checks_declared_buffer_lengths() {
    let k = onekernel_kernels::softmax::softmax_rows().unwrap();
    let mut args = Args::new()
        .buffer("x", HostBuffer::from_f32(&[0.0; 300]))
        .buffer("y", HostBuffer::zeros(onekernel_dsl::types::StorageType::F32, 299))
        .scalar("n_cols", 100u32)
        .scalar("scale", 1.0f32);
    let e = cpu::run(&k, &mut args, [3, 1, 1]).unwrap_err().to_string();
    assert_eq!(
        e,
        "kernel `softmax_rows`: buffer `y` has 299 elements but the kernel declares at least (num_groups().x * n_cols) = 300 for this launch"
    );
}

fn layer_norm_f64(x: &[f32], w: &[f32], b: &[f32], cols: usize, eps: f32) -> Vec<f64> {
    x.chunks(cols)
        .flat_map(|row| {
            let mean = row.iter().map(|&v| v as f64).sum::<f64>() / cols as f64;
            let var = row.iter().map(|&v| (v as f64 - mean).powi(2)).sum::<f64>() / cols as f64;
            let s = 1.0 / (var + eps as f64).sqrt();
            row.iter().zip(w).zip(b).map(move |((&v, &g), &c)| (v as f64 - mean) * s * g as f64 + c as f64).collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn layer_norm_matches_f64_in_both_types() {
    let kernels = onekernel_kernels::norm::layer_norm().unwrap();
    let mut rng = Rng::new(9);
    for (ty, bound) in [("f32", 2e-5), ("f16", 4e-3)] {
        let k = kernels.iter().find(|k| k.name == format!("layer_norm_{ty}")).unwrap();
        for (rows, cols) in [(1usize, 1usize), (3, 100), (2, 257), (1, 4096)] {
            let mut x = rng.f32_vec(rows * cols, -3.0, 5.0);
            if ty == "f16" {
                x = x.into_iter().map(|v| f16_to_f32(f32_to_f16(v))).collect();
            }
            let (w, b) = (rng.f32_vec(cols, 0.5, 1.5), rng.f32_vec(cols, -0.5, 0.5));
            let (xb, elem) = if ty == "f16" {
                (HostBuffer::f16_from_f32(&x), onekernel_dsl::types::StorageType::F16)
            } else {
                (HostBuffer::from_f32(&x), onekernel_dsl::types::StorageType::F32)
            };
            let mut args = Args::new()
                .buffer("x", xb)
                .buffer("w", HostBuffer::from_f32(&w))
                .buffer("b", HostBuffer::from_f32(&b))
                .buffer("y", HostBuffer::zeros(elem, rows * cols))
                .scalar("n_cols", cols as u32)
                .scalar("eps", 1e-5f32);
            cpu::run(k, &mut args, [rows as u32, 1, 1]).unwrap();
            let y = args.get_buffer("y").unwrap().to_f32();
            let want = layer_norm_f64(&x, &w, &b, cols, 1e-5);
            // Absolute error against the output scale (outputs cross zero).
            let worst = y.iter().zip(&want).map(|(&g, &r)| ((g as f64) - r).abs()).fold(0.0, f64::max);
            assert!(worst < bound, "{ty} {rows}x{cols}: max |err| {worst:e}");
        }
    }
}
