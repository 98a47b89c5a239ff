//! Throughput of the reference interpreter: interpreted operations per second (each
//! expression node, load, store or loop step counted once per active invocation) on
//! the catalogue's kernels. A program, not a test:
//!
//! ```text
//! cargo run --release -p onekernel-runtime --example interp_bench
//! ```

use onekernel_dsl::types::StorageType;
use onekernel_dsl::Kernel;
use onekernel_runtime::{cpu, Args, HostBuffer};
use std::time::Instant;

fn inputs(n: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919 % 1000) as f32 - 500.0) / 100.0).collect()
}

fn measure(label: &str, k: &Kernel, mut args: Args, groups: u32) -> (u64, f64) {
    // One warm-up run, then the best of three.
    cpu::run(k, &mut args.clone(), [groups, 1, 1]).expect("kernel runs");
    let mut best = f64::INFINITY;
    let mut ops = 0;
    for _ in 0..3 {
        let t = Instant::now();
        let stats = cpu::run(k, &mut args, [groups, 1, 1]).expect("kernel runs");
        best = best.min(t.elapsed().as_secs_f64());
        ops = stats.ops;
    }
    println!("{label:<34} {ops:>12} ops  {:>8.1} ms  {:>7.1} M ops/s", best * 1e3, ops as f64 / best / 1e6);
    (ops, best)
}

fn main() {
    let (rows, cols) = (64usize, 4096usize);
    let x = inputs(rows * cols);
    let softmax = onekernel_kernels::softmax::softmax_rows().expect("kernel loads");
    let norms = onekernel_kernels::norm::rms_norm().expect("kernels load");
    let w = vec![1.0f32; cols];
    println!("interpreter throughput ({rows} rows x {cols} columns)");
    let mut total = (0u64, 0f64);
    let runs = [
        measure(
            "softmax_rows (exp, recip, 2 reductions)",
            &softmax,
            Args::new()
                .buffer("x", HostBuffer::from_f32(&x))
                .buffer("y", HostBuffer::zeros(StorageType::F32, rows * cols))
                .scalar("n_cols", cols as u32)
                .scalar("scale", 0.125f32),
            rows as u32,
        ),
        measure(
            "rms_norm_f32 (fma, rsqrt, 1 reduction)",
            &norms[0],
            Args::new()
                .buffer("x", HostBuffer::from_f32(&x))
                .buffer("w", HostBuffer::from_f32(&w))
                .buffer("y", HostBuffer::zeros(StorageType::F32, rows * cols))
                .scalar("n_cols", cols as u32)
                .scalar("eps", 1e-6f32),
            rows as u32,
        ),
        measure(
            "rms_norm_f16 (f16 loads and stores)",
            &norms[1],
            Args::new()
                .buffer("x", HostBuffer::f16_from_f32(&x))
                .buffer("w", HostBuffer::from_f32(&w))
                .buffer("y", HostBuffer::zeros(StorageType::F16, rows * cols))
                .scalar("n_cols", cols as u32)
                .scalar("eps", 1e-6f32),
            rows as u32,
        ),
    ];
    for (ops, secs) in runs {
        total.0 += ops;
        total.1 += secs;
    }
    println!("{:<34} {:>12} ops  {:>8.1} ms  {:>7.1} M ops/s", "all", total.0, total.1 * 1e3, total.0 as f64 / total.1 / 1e6);
}
