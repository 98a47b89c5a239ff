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
//! how ANCHORS.md timed the other systems, one call each) and, as before the
//! twenty-fourth session, the sum of the two kernels' medians, each kernel timed on its
//! own after its own flush (its launch latency and its cold partial results counted).

use crate::common::{command_line, driver_copy_api, driver_copy_bytes, driver_copy_gbs, median, open_list, read_manifest, set_l2_flush, unix_time, BenchOptions, TensorCoreMode, L2_FLUSH_BYTES, L2_FLUSH_METHOD};
use anyhow::{anyhow, Context, Result};
use onekernel_runtime::attention::batch::SeqRng;
use onekernel_runtime::attention::grid::{fast_chunk, tensor_core_chunk};
use onekernel_runtime::attention::problem::TENSOR_CORE_DETERMINISTIC_CHUNK;
use onekernel_runtime::attention::{DecodeProblem, KvFormat, Split};
use onekernel_runtime::{Args, HostBuffer, Launch};

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
    let mut phys: Vec<i32> = (0..n_pages as i32).collect();
    for i in (1..n_pages).rev() {
        phys.swap(i, r.below(i as u32 + 1) as usize);
    }
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
    }
}

fn f16_image(bytes: usize, r: &mut SeqRng) -> Vec<u8> {
    let mut state = r.below(u32::MAX) as u64 | 1;
    (0..bytes / 2)
        .flat_map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (((state >> 16) as u16 & 0x8fff) | 0x3000).to_le_bytes()
        })
        .collect()
}

/// Runs the benchmark; `Ok(true)` when it ran (targets are reported, not enforced).
pub fn bench_cmd(args: &[String]) -> Result<bool> {
    let BenchOptions { backends, runs, out, evidence, quick, shapes: chosen, fast_chunk: chunk_override, det_chunks, det_long_after, tensor_cores } = BenchOptions::parse(args, true)?;
    let shapes: &[(u32, u32)] = if quick { &QUICK } else if chosen.is_empty() { &SHAPES } else { &chosen };
    let manifest = read_manifest(&out)?;
    let mut opened = open_list(&backends)?;
    let mut r = SeqRng::new(0xbe4c);
    let mut records: Vec<Vec<serde_json::Value>> = vec![Vec::new(); opened.len()];
    let mut copies = vec![f64::NAN; opened.len()];
    let mut driver = vec![f64::NAN; opened.len()];
    // The copies' sizes follow --quick, not the number of shapes: one --shape is a
    // measurement (until the twenty-fourth session it took the smoke test's small copies).
    let driver_bytes = driver_copy_bytes(quick);
    let words: Vec<u32> = (0..if quick { 1u32 << 16 } else { 24u32 << 20 }).collect();
    let copy_kernel = manifest.kernel("copy_words").ok_or_else(|| anyhow!("`copy_words` is not in the manifest"))?;
    let copy_spec = copy_kernel.variants.first().map(|v| v.spec.clone()).unwrap_or_default();
    let copy = Launch { kernel: copy_kernel, artifacts: &out, spec: &copy_spec, groups: [(words.len() as u32).div_ceil(1024), 1, 1] };
    let mut copy_args = Args::new().buffer("src", HostBuffer::from_u32(&words)).buffer("dst", HostBuffer::from_u32(&words)).scalar("n", words.len() as u32);
    let has_cuda = opened.iter().any(|b| b.name() == "cuda");
    for (i, b) in opened.iter_mut().enumerate() {
        if b.name() == "vulkan" && !has_cuda && b.info().device.contains("NVIDIA") {
            // Measured on the H200: alone, the attention kernels ran at 585–690 MHz
            // (docs/PERFORMANCE.md, "Method"); with CUDA in the same process they did not.
            eprintln!("note: NVIDIA Vulkan without CUDA in the same run was measured at low clocks on the H200 (docs/PERFORMANCE.md); for comparable figures run --backend cuda,vulkan");
        }
        set_l2_flush(b.as_mut(), &manifest, &out)?;
        let t = b.launch_repeated(&copy, &mut copy_args, 23)?;
        copies[i] = 2.0 * (words.len() * 4) as f64 / median(&t[3..]);
        eprintln!("{}: copy bandwidth (copy_words, {:.2} MiB, read + write) {:.0} GB/s", b.name(), (words.len() * 4) as f64 / 1048576.0, copies[i]);
        driver[i] = driver_copy_gbs(b.as_mut(), driver_bytes)?.unwrap_or(f64::NAN);
        eprintln!("{}: driver copy ({} MiB, read + write) {:.0} GB/s", b.name(), driver_bytes >> 20, driver[i]);
    }
    let deterministic = match (det_long_after, det_chunks) {
        (Some(long_after), chunks_per_group) => Split::DeterministicLongAfter { long_after, chunks_per_group },
        (None, Some(c)) => Split::DeterministicGrouped { chunks_per_group: c },
        (None, None) => Split::Deterministic,
    };
    for &(bsz, l) in shapes {
        let bytes = (bsz * l * HKV * D * 2) as usize;
        let image = (bsz * l.div_ceil(PAGE) * PAGE * HKV * D * 2) as usize;
        let (kimg, vimg) = (f16_image(image, &mut r), f16_image(image, &mut r));
        for paged in [true, false] {
            let p = problem(bsz, l, paged, &kimg, &vimg, &mut r);
            // (mode, split; None: the fast split with the backend's chunks). Tensor cores
            // (--tensor-cores): paged only, the scheduler's chunks (`tensor_core_chunk`)
            // unless --fast-chunk names them, or the fixed chunks.
            let mut modes: Vec<(&str, Option<Split>)> = vec![("fast", None), ("deterministic", Some(deterministic))];
            if paged {
                for &m in &tensor_cores {
                    let split = match m {
                        TensorCoreMode::Stages(stages) => Split::TensorCores { chunk_tokens: chunk_override.unwrap_or_else(|| tensor_core_chunk(&p)), stages },
                        TensorCoreMode::Deterministic => Split::tensor_cores_deterministic(),
                    };
                    modes.push((m.label(), Some(split)));
                }
            }
            for (mode, split) in modes {
                for (i, b) in opened.iter_mut().enumerate() {
                    // Fast: the scheduler's chunks for this backend (up to 512 tokens where
                    // it stages K, 256 otherwise) unless --fast-chunk names them.
                    let split = split.unwrap_or_else(|| Split::Fast { chunk_tokens: chunk_override.unwrap_or_else(|| fast_chunk(&p, b.info().async_copies)) });
                    let timed = p.time(split, b.as_mut(), &manifest, &out, runs + 3);
                    if let (Split::TensorCores { .. }, Err(onekernel_runtime::attention::AttentionError::Backend(onekernel_runtime::BackendError::Unsupported { reason, .. }))) = (split, &timed) {
                        eprintln!("{} B {bsz:>3} L {l:>5} tensor cores SKIPPED: {reason}", b.name());
                        continue;
                    }
                    let (chunk, combine) = timed.with_context(|| format!("{} B {bsz} L {l}", b.name()))?;
                    // Every sequence of a shape has length l, so one sequence's chunking is
                    // the launch's (deterministic mode: 256-token chunks past 2048 tokens or
                    // --det-long-after).
                    let plan = p.plan(split, b.info().async_copies)?;
                    let (chunk_tokens, group_tokens) = plan.sequence_tokens(l);
                    let (step, _) = p.time_step(split, b.as_mut(), &manifest, &out, runs + 3).with_context(|| format!("{} B {bsz} L {l}: decode step", b.name()))?;
                    let (tc, tm, ts) = (median(&chunk[3..]), median(&combine[3..]), median(&step[3..]));
                    let t = tc + tm;
                    let gbs = 2.0 * bytes as f64 / t;
                    let step_gbs = 2.0 * bytes as f64 / ts;
                    eprintln!(
                        "{} B {bsz:>3} L {l:>5} {:<10} {mode:<13} step {:>9.1} µs {:>7.0} GB/s; kernels apart {:>9.1} µs {:>7.0} GB/s",
                        b.name(),
                        if paged { "paged" } else { "contiguous" },
                        ts / 1e3,
                        step_gbs,
                        t / 1e3,
                        gbs
                    );
                    records[i].push(serde_json::json!({
                        "batch": bsz, "kv_len": l, "layout": if paged { "paged16" } else { "contiguous" }, "mode": mode,
                        "chunk_tokens": chunk_tokens, "group_tokens": group_tokens, "long_pairs": plan.long_pairs,
                        "step_median_ns": ts, "step_gb_per_s": step_gbs, "step_fraction_of_driver_copy": step_gbs / driver[i],
                        "chunk_median_ns": tc, "combine_median_ns": tm, "total_ns": t, "kv_bytes": 2 * bytes, "gb_per_s": gbs, "fraction_of_copy": gbs / copies[i], "fraction_of_driver_copy": gbs / driver[i],
                    }));
                }
            }
        }
    }
    for (i, b) in opened.iter_mut().enumerate() {
        let name = b.name();
        let find = |bs: u32, l: u32, layout: &str, mode: &str, field: &str| {
            records[i].iter().find(|x| x["batch"] == bs && x["kv_len"] == l && x["layout"] == layout && x["mode"] == mode).and_then(|x| x[field].as_f64()).unwrap_or(f64::NAN)
        };
        println!(
            "\n{name}: copy {:.0} GB/s (copy_words, read + write), driver copy {:.0} GB/s ({} MiB, read + write); effective K+V bandwidth, Hq 32, Hkv 8, D 128, f16",
            copies[i],
            driver[i],
            driver_bytes >> 20
        );
        for (title, field) in [("decode step (chunk + combine back to back, one L2 flush per step)", "step_median_ns"), ("kernels timed apart (chunk + combine medians, each after its own L2 flush)", "total_ns")] {
            println!("\n{name}, {title}:");
            println!("| B × L | paged fast | of copy_words / driver copy | paged deterministic | contiguous fast | block-table overhead | deterministic overhead |");
            println!("|---|---|---|---|---|---|---|");
            for &(bs, l) in shapes {
                let bytes = 2.0 * (bs * l * HKV * D * 2) as f64;
                let (pf, pd, cf) = (find(bs, l, "paged16", "fast", field), find(bs, l, "paged16", "deterministic", field), find(bs, l, "contiguous", "fast", field));
                println!(
                    "| {bs} × {l} | {:.1} µs, {:.2} TB/s | {:.0} % / {:.0} % | {:.1} µs, {:.2} TB/s | {:.1} µs, {:.2} TB/s | {:+.1} % | {:+.1} % |",
                    pf / 1e3,
                    bytes / pf / 1e3,
                    100.0 * bytes / pf / copies[i],
                    100.0 * bytes / pf / driver[i],
                    pd / 1e3,
                    bytes / pd / 1e3,
                    cf / 1e3,
                    bytes / cf / 1e3,
                    100.0 * (pf / cf - 1.0),
                    100.0 * (pd / pf - 1.0)
                );
            }
        }
        for &m in &tensor_cores {
            let (mode, what) = match m {
                TensorCoreMode::Stages(s) => (m.label(), format!("the scheduler's chunks, {s} pipeline stages")),
                TensorCoreMode::Deterministic => (m.label(), format!("fixed {TENSOR_CORE_DETERMINISTIC_CHUNK}-token chunks: batch-invariant")),
            };
            let steps: Vec<f64> = shapes.iter().map(|&(bs, l)| find(bs, l, "paged16", mode, "step_median_ns")).collect();
            // A backend that cannot run the kernel (the SKIPPED lines above) gets no table.
            if !steps.iter().any(|t| t.is_finite()) {
                println!("\n{name}: no tensor-core rows ({what}): skipped on this backend, see above");
                continue;
            }
            println!("\n{name}, paged decode step on tensor cores (`attn_decode_chunk_mma`, {what}; class fast: within tolerance of the reference, not bitwise):");
            println!("| B × L | tensor cores | of driver copy | paged fast (exact) | tensor cores / fast |");
            println!("|---|---|---|---|---|");
            for (&(bs, l), &tc) in shapes.iter().zip(&steps) {
                let bytes = 2.0 * (bs * l * HKV * D * 2) as f64;
                let pf = find(bs, l, "paged16", "fast", "step_median_ns");
                if tc.is_finite() {
                    println!("| {bs} × {l} | {:.1} µs, {:.2} TB/s | {:.0} % | {:.1} µs | {:.2} |", tc / 1e3, bytes / tc / 1e3, 100.0 * bytes / tc / driver[i], pf / 1e3, tc / pf);
                } else {
                    println!("| {bs} × {l} | skipped | | {:.1} µs | |", pf / 1e3);
                }
            }
        }
        if let Some(dir) = &evidence {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let doc = serde_json::json!({
                "command": command_line(), "unix_time": unix_time(), "device": b.info(), "runs": runs, "warmup": 3, "l2_flush_bytes": L2_FLUSH_BYTES, "l2_flush": L2_FLUSH_METHOD,
                "shape": {"n_heads": HQ, "n_kv_heads": HKV, "head_dim": D, "kv_type": "f16", "page_size": PAGE},
                "copy_gb_per_s": copies[i], "driver_copy": {"api": driver_copy_api(name), "bytes": driver_bytes, "gb_per_s": driver[i]}, "quick_smoke_test": quick, "results": records[i],
            });
            let p = dir.join(format!("bench-attention-{name}.json"));
            std::fs::write(&p, serde_json::to_string_pretty(&doc)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
            eprintln!("evidence written to {}", p.display());
        }
    }
    Ok(true)
}
