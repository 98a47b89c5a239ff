//! `onekernel bench-tiles`: what each register-tile operation costs on each backend.
//!
//! The catalogue's `tile_probe` (kernel-dsl/kernels/src/copy.rs): 528 workgroups of
//! four groups of 32 invocations, each group running `ITERS` iterations of one pattern
//! over its own 16 × 136 f16 region of shared memory — operand loads in each layout with
//! a product, the product alone, a round trip of the accumulators through shared memory,
//! loads from a buffer — with 21 KiB of shared memory per workgroup, and two of them
//! again with 47 KiB (`padded`). Reported per pattern: the
//! median device time of one launch and the time per group and iteration (the launch's
//! time over the iterations each SM's groups run), so that one backend's lowering can be
//! compared with another's on the same GPU (docs/PERFORMANCE.md, "Decode attention").

use crate::common::{command_line, open_list, read_manifest, unix_time, write_evidence, BenchOptions};
use anyhow::{bail, Context, Result};
use onekernel_cli::harness::{after_warmup, median, WARMUP};
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, BackendError, BufferScope, HostBuffer, Launch, TimedUnit, Work};

/// The patterns, by `mode`.
const PATTERNS: [(u32, &str); 7] = [
    (0, "load A by rows, B by columns (shared), product"),
    (1, "load A by columns, B by columns (shared), product"),
    (2, "load A by rows, B by rows (shared), product"),
    (3, "load A by columns, B by rows (shared), product"),
    (4, "product only"),
    (5, "accumulators stored to and loaded from shared memory, product"),
    (6, "load A by rows, B by columns (buffer), product"),
];

/// Workgroups per launch: four per SM of a 132-SM H100/H200.
const GROUPS: u32 = 528;
/// Iterations per group.
const ITERS: u32 = 4096;

/// Runs the benchmark; `Ok(true)` when it ran.
pub fn bench_tiles_cmd(args: &[String]) -> Result<bool> {
    let o = BenchOptions::parse("bench-tiles", args, false)?;
    let manifest = read_manifest(&o.out)?;
    let dir = o.out.clone();
    let km = manifest.kernel("tile_probe").context("`tile_probe` is not in the manifest")?;
    let variant = |padded: bool| km.variants.iter().find(|v| v.label == format!("padded = {padded}")).map(|v| &v.spec);
    let src: Vec<u32> = (0..4352u32).map(|i| 0x3c00_3c00 ^ (i & 0x03ff_03ff)).collect();
    let mut backends = open_list(&o.backends, o.backends_named)?;
    let mut records = Vec::new();
    for b in backends.iter_mut() {
        let name = b.name().to_string();
        let mut results = Vec::new();
        let runs = PATTERNS.iter().map(|&(m, w)| (m, w, false)).chain([(0, PATTERNS[0].1, true), (4, PATTERNS[4].1, true)]);
        for (mode, what, padded) in runs {
            let Some(spec) = variant(padded) else { bail!("the probe has no variant padded = {padded}") };
            let mut args = [Args::new()
                .buffer("src", HostBuffer::from_u32(&src))
                .buffer("out", HostBuffer::zeros(StorageType::F32, (GROUPS * 1024) as usize))
                .scalar("iters", ITERS)
                .scalar("mode", mode)];
            let launch = [Launch { kernel: km, artifacts: &dir, spec, groups: [GROUPS, 1, 1] }];
            let unit =
                TimedUnit { work: Work::Launches { launches: &launch, buffers: BufferScope::Shared }, runs: o.runs + WARMUP as u32, prelude: None };
            let times = match b.time(&unit, &mut args) {
                Ok(t) => t,
                Err(BackendError::Unsupported { reason, .. }) => {
                    eprintln!("{name}: SKIPPED: {reason}");
                    break;
                }
                Err(e) => bail!("{name}, {what}: {e}"),
            };
            let ns: Vec<f64> = after_warmup(&times).iter().copied().filter(|t| t.is_finite()).collect();
            if ns.is_empty() {
                bail!("{name} does not measure device time");
            }
            let t = median(&ns);
            // 132 SMs, four workgroups each: every SM runs its 16 groups' iterations.
            let per_iter = t / f64::from(ITERS);
            let shared = if padded { "47 KiB shared" } else { "21 KiB shared" };
            eprintln!("{name:<7} {what:<66} {shared}  {:>9.1} µs  {per_iter:>6.2} ns per group iteration", t / 1e3);
            results.push(serde_json::json!({"mode": mode, "pattern": what, "padded": padded, "median_ns": t, "ns_per_iteration": per_iter}));
        }
        records.push((name, b.info().clone(), results));
    }
    if let Some(ev) = &o.evidence {
        for (name, info, results) in &records {
            let doc = serde_json::json!({
                "command": command_line(), "unix_time": unix_time(), "device": info, "runs": o.runs, "warmup": WARMUP,
                "workgroups": GROUPS, "iterations": ITERS, "results": results,
            });
            write_evidence(ev, &format!("bench-tiles-{name}.json"), &doc)?;
        }
    }
    Ok(true)
}
