//! `onekernel bench`: decode attention on the GPU machine over ANCHORS.md's shapes
//! (Hq 32, Hkv 8, D 128, f16 K/V; B × L ∈ {1×4096, 1×32768, 16×4096, 64×4096,
//! 16×32768, 128×8192}; `--shape BxL`, repeatable, measures others instead), paged (pages
//! of 16, random permutation) and contiguous, fast and deterministic: median device time
//! of `--runs` dispatches of the chunk and the combine kernel after 3 warm-ups, inputs uploaded once, L2 flushed before every run
//! (`read_words` over 128 MiB: clean lines, docs/PERFORMANCE.md). The copy
//! bandwidth is measured in the same run. Writes markdown tables and JSON.
//!
//! Two times per configuration: the decode step (both kernels back to back as one timed
//! unit, the L2 flushed before each step: what an application's decode step costs, and
//! how ANCHORS.md timed the other systems, one call each) and the sum of the two
//! kernels' medians, each kernel timed on its own after its own flush (its launch
//! latency and its cold partial results counted).

use crate::common::{
    command_line, open_list, read_manifest, report_compiler_warnings, shuffled_pages, unix_time, write_evidence, BenchOptions, TensorCoreMode,
    Xorshift,
};
use anyhow::{anyhow, Context, Result};
use onekernel_cli::harness::{
    after_warmup, driver_copy_api, driver_copy_bytes, driver_copy_gbs, l2_flush, median, L2_FLUSH_BYTES, L2_FLUSH_METHOD, WARMUP,
};
use onekernel_dsl::manifest::Manifest;
use onekernel_ops::attention::batch::SeqRng;
use onekernel_ops::attention::grid::{fast_chunk, tensor_core_chunk};
use onekernel_ops::attention::problem::merges_in_chunk_kernel;
use onekernel_ops::attention::problem::TENSOR_CORE_DETERMINISTIC_CHUNK;
use onekernel_ops::attention::{AttentionError, DecodeProblem, KvFormat, Split};
use onekernel_ops::{Device, Timing};
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch, Prelude, TimedUnit, Work};
use std::path::Path;

const SHAPES: [(u32, u32); 6] = [(1, 4096), (1, 32768), (16, 4096), (64, 4096), (16, 32768), (128, 8192)];
/// `--quick`: a smoke test of the program itself (CI, lavapipe), not a measurement.
const QUICK: [(u32, u32); 1] = [(1, 100)];
const HQ: u32 = 32;
const HKV: u32 = 8;
const D: u32 = 128;
const PAGE: u32 = 16;

/// A cache of B sequences of L tokens with random f16 values in [1/8, 2) (sign random):
/// contiguous, or paged with a random page permutation.
fn problem(b: u32, l: u32, paged: bool, k: &[u8], v: &[u8], r: &mut SeqRng) -> DecodeProblem {
    let pps = l.div_ceil(PAGE);
    let n_pages = (b * pps) as usize;
    let phys = shuffled_pages(n_pages, r);
    DecodeProblem {
        head_dim: D,
        n_heads: HQ,
        n_kv_heads: HKV,
        page_size: PAGE,
        pages_per_seq: pps,
        kv_len: vec![l; b as usize],
        k_format: KvFormat::F16,
        v_format: KvFormat::F16,
        k: k.to_vec(),
        v: v.to_vec(),
        block_table: paged.then_some(phys),
        q: (0..b * HQ * D).map(|_| r.range(-1.0, 1.0) as f32).collect(),
        scale: 1.0 / (D as f32).sqrt(),
        softcap: 0.0,
        max_bias: 0.0,
        mask: None,
        sinks: None,
        v_head_dim: None,
    }
}

/// A backend's baselines: `copy_words`' and the driver's copy bandwidth in GB/s.
#[derive(Clone, Copy)]
struct Baselines {
    copy: f64,
    driver: f64,
}

/// `copy_words` over `words` and the driver's copy of `driver_bytes`, on `b`, each
/// run after `flush`.
fn baselines(b: &mut dyn Backend, manifest: &Manifest, out: &Path, flush: &Prelude, words: &[u32], driver_bytes: u64) -> Result<Baselines> {
    let copy_kernel = manifest.kernel("copy_words").ok_or_else(|| anyhow!("`copy_words` is not in the manifest"))?;
    let copy_spec = copy_kernel.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let copy = [Launch { kernel: copy_kernel, artifacts: out, spec: &copy_spec, groups: [(words.len() as u32).div_ceil(1024), 1, 1] }];
    let mut copy_args =
        [Args::new().buffer("src", HostBuffer::from_u32(words)).buffer("dst", HostBuffer::from_u32(words)).scalar("n", words.len() as u32)];
    let unit = TimedUnit {
        work: Work::Launches { launches: &copy, buffers: onekernel_runtime::BufferScope::Shared },
        runs: 20 + WARMUP as u32,
        prelude: Some(flush),
    };
    let t = b.time(&unit, &mut copy_args)?;
    let copy = 2.0 * (words.len() * 4) as f64 / median(after_warmup(&t));
    eprintln!("{}: copy bandwidth (copy_words, {:.2} MiB, read + write) {copy:.0} GB/s", b.name(), (words.len() * 4) as f64 / 1048576.0);
    let driver = driver_copy_gbs(b, driver_bytes, Some(flush))?.unwrap_or(f64::NAN);
    eprintln!("{}: driver copy ({} MiB, read + write) {driver:.0} GB/s", b.name(), driver_bytes >> 20);
    Ok(Baselines { copy, driver })
}

/// One configuration's times on one backend: the medians of the chunk kernel, the
/// combine kernel (each timed apart; 0 where the step is one launch) and the decode
/// step, in ns. `None` where the backend cannot run the tensor-core kernel (said on
/// stderr).
fn time_configuration<'a>(
    dev: &mut Device<'a>,
    p: &DecodeProblem,
    split: Split,
    merge: Option<bool>,
    runs: u32,
    flush: &'a Prelude<'a>,
    what: &str,
) -> Result<Option<[f64; 3]>> {
    let timing = |apart| Some(Timing { runs: runs + WARMUP as u32, layers: 1, apart, prelude: Some(flush) });
    dev.set_timing(timing(true));
    let merge = merge.unwrap_or_else(|| merges_in_chunk_kernel(dev.backend().info()));
    let apart = p.run_merging(split, dev, merge);
    if let (Split::TensorCores { .. }, Err(AttentionError::Backend(BackendError::Unsupported { reason, .. }))) = (split, &apart) {
        eprintln!("{what} tensor cores SKIPPED: {reason}");
        dev.set_timing(None);
        return Ok(None);
    }
    apart.with_context(|| what.to_string())?;
    // A tensor-core launch of few chunks per sequence is one kernel (the chunk kernel
    // merges and normalizes itself): no combine time.
    let chunk = median(after_warmup(&dev.last_times()[0]));
    let combine = dev.last_times().get(1).map_or(0.0, |t| median(after_warmup(t)));
    dev.set_timing(timing(false));
    let step = p.run_merging(split, dev, merge).with_context(|| format!("{what}: decode step"));
    dev.set_timing(None);
    step?;
    Ok(Some([chunk, combine, median(after_warmup(&dev.last_times()[0]))]))
}

/// The deterministic split `--det-long-after` / `--det-chunks` ask for.
fn deterministic_split(det_long_after: Option<u32>, det_chunks: Option<u32>) -> Split {
    match (det_long_after, det_chunks) {
        (Some(long_after), chunks_per_group) => Split::DeterministicLongAfter { long_after, chunks_per_group },
        (None, Some(c)) => Split::DeterministicGrouped { chunks_per_group: c },
        (None, None) => Split::Deterministic,
    }
}

/// The modes a shape is timed in: (mode, split; `None`: the fast split with the
/// backend's chunks). Tensor cores (`--tensor-cores`): paged only, the scheduler's
/// chunks (`tensor_core_chunk`) unless `--tc-chunk` names them, or the fixed chunks;
/// with `--tensor-cores-only`, those alone.
fn modes(o: &BenchOptions, p: &DecodeProblem, paged: bool) -> Vec<(&'static str, Option<Split>)> {
    let mut modes: Vec<(&str, Option<Split>)> = if o.tensor_cores_only {
        Vec::new()
    } else {
        vec![("fast", None), ("deterministic", Some(deterministic_split(o.det_long_after, o.det_chunks)))]
    };
    if paged {
        for &m in &o.tensor_cores {
            let split = match m {
                TensorCoreMode::Stages(stages) => Split::TensorCores { chunk_tokens: o.tc_chunk.unwrap_or_else(|| tensor_core_chunk(p)), stages },
                TensorCoreMode::Deterministic => Split::tensor_cores_deterministic(),
            };
            modes.push((m.label(), Some(split)));
        }
    }
    modes
}

/// Runs the benchmark; `Ok(true)` when it ran (targets are reported, not enforced).
pub fn bench_cmd(args: &[String]) -> Result<bool> {
    let o = BenchOptions::parse("bench", args, true)?;
    if o.smoke {
        anyhow::bail!("`bench` has --quick (one small shape) and --shape BxL; --smoke is an option of bench-kvquant and bench-linear");
    }
    if o.tensor_cores_only && o.tensor_cores.is_empty() {
        anyhow::bail!("--tensor-cores-only times the --tensor-cores modes alone: name them (e.g. --tensor-cores 2)");
    }
    let shapes: Vec<(u32, u32)> = if o.quick {
        QUICK.to_vec()
    } else if o.shapes.is_empty() {
        SHAPES.to_vec()
    } else {
        o.shapes.clone()
    };
    let manifest = read_manifest(&o.out)?;
    let out = o.out.clone();
    let flush = l2_flush(&manifest, &out, L2_FLUSH_BYTES)?;
    let mut opened = open_list(&o.backends, o.backends_named)?;
    let mut r = SeqRng::new(0xbe4c);
    let mut records: Vec<Vec<serde_json::Value>> = vec![Vec::new(); opened.len()];
    // The copies' sizes follow --quick, not the number of shapes: one --shape is a
    // measurement.
    let driver_bytes = driver_copy_bytes(o.quick);
    let words: Vec<u32> = (0..if o.quick { 1u32 << 16 } else { 24u32 << 20 }).collect();
    let has_cuda = opened.iter().any(|b| b.name() == "cuda");
    let mut base = Vec::with_capacity(opened.len());
    for b in opened.iter_mut() {
        if b.name() == "vulkan" && !has_cuda && b.info().device.contains("NVIDIA") {
            // Measured on the H200: alone, the attention kernels ran at 585–690 MHz
            // (docs/PERFORMANCE.md, "Method"); with CUDA in the same process they did not.
            eprintln!("note: NVIDIA Vulkan without CUDA in the same run was measured at low clocks on the H200 (docs/PERFORMANCE.md); for comparable figures run --backend cuda,vulkan");
        }
        base.push(baselines(b.as_mut(), &manifest, &out, &flush, &words, driver_bytes)?);
    }
    for &(bsz, l) in &shapes {
        let bytes = (bsz * l * HKV * D * 2) as usize;
        let image = (bsz * l.div_ceil(PAGE) * PAGE * HKV * D * 2) as usize;
        let (kimg, vimg) = (Xorshift::from(&mut r).f16_image(image), Xorshift::from(&mut r).f16_image(image));
        // Tensor cores run the paged cache only.
        for paged in [true, false].into_iter().filter(|&paged| paged || !o.tensor_cores_only) {
            let p = problem(bsz, l, paged, &kimg, &vimg, &mut r);
            for (mode, split) in modes(&o, &p, paged) {
                for (i, b) in opened.iter_mut().enumerate() {
                    // Fast: the scheduler's chunks for this backend (up to 512 tokens where
                    // it stages K, 256 otherwise) unless --fast-chunk names them.
                    let async_copies = b.info().async_copies;
                    let split = split.unwrap_or_else(|| Split::Fast { chunk_tokens: o.fast_chunk.unwrap_or_else(|| fast_chunk(&p, async_copies)) });
                    let what = format!("{} B {bsz:>3} L {l:>5}", b.name());
                    let mut dev = Device::new(b.as_mut(), &manifest, &out);
                    let Some([tc, tm, ts]) = time_configuration(&mut dev, &p, split, o.merge, o.runs, &flush, &what)? else { continue };
                    // Every sequence of a shape has length l, so one sequence's chunking is
                    // the launch's.
                    let plan = p.plan(split, async_copies)?;
                    let (chunk_tokens, group_tokens) = plan.sequence_tokens(l);
                    let t = tc + tm;
                    let (gbs, step_gbs) = (2.0 * bytes as f64 / t, 2.0 * bytes as f64 / ts);
                    let layout = if paged { "paged" } else { "contiguous" };
                    eprintln!(
                        "{what} {layout:<10} {mode:<13} step {:>9.1} µs {step_gbs:>7.0} GB/s; kernels apart {:>9.1} µs {gbs:>7.0} GB/s",
                        ts / 1e3,
                        t / 1e3
                    );
                    let Baselines { copy, driver } = base[i];
                    records[i].push(serde_json::json!({
                        "batch": bsz, "kv_len": l, "layout": if paged { "paged16" } else { "contiguous" }, "mode": mode,
                        "chunk_tokens": chunk_tokens, "group_tokens": group_tokens, "long_pairs": plan.long_pairs,
                        "step_median_ns": ts, "step_gb_per_s": step_gbs, "step_fraction_of_driver_copy": step_gbs / driver,
                        "chunk_median_ns": tc, "combine_median_ns": tm, "total_ns": t, "kv_bytes": 2 * bytes, "gb_per_s": gbs, "fraction_of_copy": gbs / copy, "fraction_of_driver_copy": gbs / driver,
                    }));
                }
            }
        }
    }
    report_compiler_warnings(&opened);
    for (i, b) in opened.iter_mut().enumerate() {
        let report = Report { name: b.name(), base: base[i], driver_bytes, shapes: &shapes, records: &records[i] };
        report.print_tables(&o.tensor_cores, o.tensor_cores_only);
        if let Some(dir) = &o.evidence {
            let doc = serde_json::json!({
                "command": command_line(), "unix_time": unix_time(), "device": b.info(), "runs": o.runs, "warmup": WARMUP, "l2_flush_bytes": L2_FLUSH_BYTES, "l2_flush": L2_FLUSH_METHOD,
                "shape": {"n_heads": HQ, "n_kv_heads": HKV, "head_dim": D, "kv_type": "f16", "page_size": PAGE},
                "copy_gb_per_s": report.base.copy, "driver_copy": {"api": driver_copy_api(report.name), "bytes": driver_bytes, "gb_per_s": report.base.driver}, "quick_smoke_test": o.quick, "results": records[i],
            });
            write_evidence(dir, &format!("bench-attention-{}.json", report.name), &doc)?;
        }
    }
    Ok(true)
}

/// One backend's results, printed as markdown tables.
struct Report<'a> {
    name: &'static str,
    base: Baselines,
    driver_bytes: u64,
    shapes: &'a [(u32, u32)],
    records: &'a [serde_json::Value],
}

impl Report<'_> {
    /// `field` of the record of a shape, layout and mode (NaN where there is none).
    fn find(&self, bs: u32, l: u32, layout: &str, mode: &str, field: &str) -> f64 {
        self.records
            .iter()
            .find(|x| x["batch"] == bs && x["kv_len"] == l && x["layout"] == layout && x["mode"] == mode)
            .and_then(|x| x[field].as_f64())
            .unwrap_or(f64::NAN)
    }

    /// The step and kernels-apart tables (not where only tensor cores ran), then one per
    /// tensor-core mode.
    fn print_tables(&self, tensor_cores: &[TensorCoreMode], tensor_cores_only: bool) {
        let (name, Baselines { copy, driver }) = (self.name, self.base);
        println!("\n{name}: copy {copy:.0} GB/s (copy_words, read + write), driver copy {driver:.0} GB/s ({} MiB, read + write); effective K+V bandwidth, Hq 32, Hkv 8, D 128, f16", self.driver_bytes >> 20);
        let exact_tables: &[(&str, &str)] = if tensor_cores_only {
            &[]
        } else {
            &[
                ("decode step (chunk + combine back to back, one L2 flush per step)", "step_median_ns"),
                ("kernels timed apart (chunk + combine medians, each after its own L2 flush)", "total_ns"),
            ]
        };
        for &(title, field) in exact_tables {
            println!("\n{name}, {title}:");
            println!("| B × L | paged fast | of copy_words / driver copy | paged deterministic | contiguous fast | block-table overhead | deterministic overhead |");
            println!("|---|---|---|---|---|---|---|");
            for &(bs, l) in self.shapes {
                let bytes = 2.0 * (bs * l * HKV * D * 2) as f64;
                let (pf, pd, cf) = (
                    self.find(bs, l, "paged16", "fast", field),
                    self.find(bs, l, "paged16", "deterministic", field),
                    self.find(bs, l, "contiguous", "fast", field),
                );
                println!(
                    "| {bs} × {l} | {:.1} µs, {:.2} TB/s | {:.0} % / {:.0} % | {:.1} µs, {:.2} TB/s | {:.1} µs, {:.2} TB/s | {:+.1} % | {:+.1} % |",
                    pf / 1e3,
                    bytes / pf / 1e3,
                    100.0 * bytes / pf / copy,
                    100.0 * bytes / pf / driver,
                    pd / 1e3,
                    bytes / pd / 1e3,
                    cf / 1e3,
                    bytes / cf / 1e3,
                    100.0 * (pf / cf - 1.0),
                    100.0 * (pd / pf - 1.0)
                );
            }
        }
        for &m in tensor_cores {
            self.print_tensor_core_table(m);
        }
    }

    /// The paged step on tensor cores in mode `m` against the exact fast step.
    fn print_tensor_core_table(&self, m: TensorCoreMode) {
        let name = self.name;
        let what = match m {
            TensorCoreMode::Stages(s) => format!("the scheduler's chunks, up to {s} pipeline stages: the deepest the device's shared memory holds"),
            TensorCoreMode::Deterministic => format!("fixed {TENSOR_CORE_DETERMINISTIC_CHUNK}-token chunks: batch-invariant"),
        };
        let steps: Vec<f64> = self.shapes.iter().map(|&(bs, l)| self.find(bs, l, "paged16", m.label(), "step_median_ns")).collect();
        // A backend that cannot run the kernel (the SKIPPED lines) gets no table.
        if !steps.iter().any(|t| t.is_finite()) {
            println!("\n{name}: no tensor-core rows ({what}): skipped on this backend, see above");
            return;
        }
        println!("\n{name}, paged decode step on tensor cores (`attn_decode_chunk_mma`, {what}; class fast: within tolerance of the reference, not bitwise):");
        println!("| B × L | tensor cores | of driver copy | paged fast (exact) | tensor cores / fast |");
        println!("|---|---|---|---|---|");
        for (&(bs, l), &tc) in self.shapes.iter().zip(&steps) {
            let bytes = 2.0 * (bs * l * HKV * D * 2) as f64;
            let pf = self.find(bs, l, "paged16", "fast", "step_median_ns");
            // `--tensor-cores-only`: no exact step to compare with.
            let (exact, ratio) =
                if pf.is_finite() { (format!("{:.1} µs", pf / 1e3), format!("{:.2}", tc / pf)) } else { ("—".into(), "—".into()) };
            if tc.is_finite() {
                println!(
                    "| {bs} × {l} | {:.1} µs, {:.2} TB/s | {:.0} % | {exact} | {ratio} |",
                    tc / 1e3,
                    bytes / tc / 1e3,
                    100.0 * bytes / tc / self.base.driver
                );
            } else {
                println!("| {bs} × {l} | skipped | | {exact} | |");
            }
        }
    }
}
