//! `onekernel bench-prefill`: causal prefill attention in its exact, deterministic mode
//! (every query's bits are its decode step's; docs/RUNTIME.md, "Prefill") and in its fast
//! mode on tensor cores (`attn_prefill_mma`, the device's block form) on the GPU machine: Hq 32, Hkv 8, D 128, f16 K/V in pages of 16 (random permutation), B × T ∈
//! {1 × 4096, 4 × 2048, 16 × 512} with fresh sequences (T = the sequence's length) and
//! one varlen mix (4 sequences of 3000, 100, 700 and 1200 new tokens over caches of
//! 3000, 2148, 700 and 1456 tokens). One step (chunk + combine over every query) timed as
//! one unit after an L2 flush, median of `--runs`; TFLOP/s with causal FLOPs counted
//! once: 4 · D · Hq per (query, visible token) pair. PyTorch SDPA's flash and cuDNN
//! backends on the same shapes run beside it (`cli/anchors/sdpa_prefill.py`,
//! `scripts/gpu-evidence.sh`, part `prefill`).

use crate::common::{
    command_line, open_list, read_manifest, report_compiler_warnings, shuffled_pages, time_layers, unix_time, write_evidence, BenchOptions, Xorshift,
};
use anyhow::{Context, Result};
use onekernel_cli::harness::{l2_flush, L2_FLUSH_BYTES, L2_FLUSH_METHOD, SMOKE_FLUSH_BYTES, WARMUP};
use onekernel_ops::attention::batch::SeqRng;
use onekernel_ops::attention::{AttentionError, KvFormat, PrefillProblem, RowLayout, Split, TiledBlocks};
use onekernel_ops::Device;
use onekernel_runtime::BackendError;

const HQ: u32 = 32;
const HKV: u32 = 8;
const D: u32 = 128;
const PAGE: u32 = 16;

/// A step of `(kv_len, new tokens)` per sequence: random f16 K/V (|x| in [1/8, 2)),
/// pages in a random permutation, queries uniform in [−1, 1).
fn step(seqs: &[(u32, u32)], r: &mut SeqRng) -> PrefillProblem {
    let pps = seqs.iter().map(|s| s.0).max().unwrap_or(1).div_ceil(PAGE);
    let n_pages = seqs.len() * pps as usize;
    let bytes = n_pages * (PAGE * HKV * D * 2) as usize;
    let mut x = Xorshift::from(r);
    let (k, v) = (x.f16_image(bytes), x.f16_image(bytes));
    let phys = shuffled_pages(n_pages, r);
    let n: u32 = seqs.iter().map(|s| s.1).sum();
    PrefillProblem {
        head_dim: D,
        n_heads: HQ,
        n_kv_heads: HKV,
        page_size: PAGE,
        pages_per_seq: pps,
        kv_len: seqs.iter().map(|s| s.0).collect(),
        q_tokens: seqs.iter().map(|s| s.1).collect(),
        k_format: KvFormat::F16,
        v_format: KvFormat::F16,
        k,
        v,
        block_table: Some(phys),
        q: (0..n * HQ * D).map(|_| r.range(-1.0, 1.0) as f32).collect(),
        q_layout: RowLayout::dense(HQ, D),
        out_layout: RowLayout::dense(HQ, D),
        scale: 1.0 / (D as f32).sqrt(),
        softcap: 0.0,
        max_bias: 0.0,
        mask: None,
        sinks: None,
        v_head_dim: None,
    }
}

/// Causal FLOPs of a step: 4 · D · Hq per visible (query, token) pair.
fn flops(p: &PrefillProblem) -> f64 {
    p.positions().iter().map(|&pos| 4.0 * (D * HQ) as f64 * (pos + 1) as f64).sum()
}

/// Runs the benchmark; `Ok(true)` when it ran.
pub fn bench_prefill_cmd(args: &[String]) -> Result<bool> {
    let options = BenchOptions::parse("bench-prefill", args, true)?;
    options.reject_attention_options()?;
    let BenchOptions { backends, backends_named, runs, out, evidence, quick, smoke, .. } = options;
    let small = quick || smoke;
    if small {
        eprintln!("--quick/--smoke: one small step, a check of the program, not a measurement");
    }
    let manifest = read_manifest(&out)?;
    let flush = l2_flush(&manifest, &out, if small { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES })?;
    let mut opened = open_list(&backends, backends_named)?;
    let mut r = SeqRng::new(0x9ef1);
    let cases: Vec<(&str, Vec<(u32, u32)>)> = if small {
        vec![("2 × 40", vec![(40, 40); 2])]
    } else {
        vec![
            ("1 × 4096", vec![(4096, 4096)]),
            ("4 × 2048", vec![(2048, 2048); 4]),
            ("16 × 512", vec![(512, 512); 16]),
            ("varlen mix", vec![(3000, 3000), (2148, 100), (700, 700), (1456, 1200)]),
        ]
    };
    let mut rows = String::new();
    let mut records = Vec::new();
    for (label, seqs) in &cases {
        let p = step(seqs, &mut r);
        let f = flops(&p);
        for be in opened.iter_mut() {
            let name = be.name();
            let mut dev = Device::new(be.as_mut(), &manifest, &out);
            let blocks = TiledBlocks::for_device(&dev);
            for tensor_cores in [false, true] {
                let mode = if tensor_cores { format!("fast, tensor cores ({blocks:?})") } else { "exact (deterministic)".to_string() };
                let t = time_layers(&mut dev, runs as usize, 1, &flush, |d| {
                    if tensor_cores {
                        p.run_tensor_cores(blocks, d).map(|_| ())
                    } else {
                        p.run(Split::Deterministic, d).map(|_| ())
                    }
                });
                let t = match t {
                    Err(e) if matches!(e.downcast_ref::<AttentionError>(), Some(AttentionError::Backend(BackendError::Unsupported { .. }))) => {
                        let row = format!("| {name} | {label} | {} | {mode} | skipped: {e} | |", p.n_queries());
                        eprintln!("{row}");
                        rows += &(row + "\n");
                        continue;
                    }
                    other => other.with_context(|| format!("{name}: prefill {label}, {mode}"))?,
                };
                let row = format!("| {name} | {label} | {} | {mode} | {:.1} | {:.2} |", p.n_queries(), t.median / 1e3, f / t.median / 1e3);
                eprintln!("{row}");
                rows += &(row + "\n");
                records.push(serde_json::json!({
                    "backend": name, "device": dev.backend().info(), "case": label, "sequences": seqs.iter().map(|s| serde_json::json!({"kv_len": s.0, "new_tokens": s.1})).collect::<Vec<_>>(),
                    "n_heads": HQ, "n_kv_heads": HKV, "head_dim": D, "kv_type": "f16", "page_size": PAGE, "mode": mode,
                    "median_ns": t.median, "min_ns": t.min, "max_ns": t.max, "causal_flops": f, "tflop_per_s": f / t.median / 1e3,
                }));
            }
        }
    }
    report_compiler_warnings(&opened);
    println!("Causal prefill, Hq 32, Hkv 8, D 128, f16, paged; one step after an L2 flush. Exact: each query's bits are its decode step's; fast: `attn_prefill_mma` on tensor cores (class fast):");
    println!("| backend | B × T | queries | mode | µs | TFLOP/s (causal) |");
    println!("|---|---|---|---|---|---|");
    print!("{rows}");
    if let Some(dir) = evidence {
        let doc = serde_json::json!({
            "command": command_line(), "unix_time": unix_time(), "runs": runs, "warmup": WARMUP,
            "l2_flush_bytes": if small { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES }, "l2_flush": L2_FLUSH_METHOD, "smoke_test": small,
            "results": records,
        });
        write_evidence(&dir, "bench-prefill.json", &doc)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn causal_flops_count_each_visible_pair_once() {
        let mut r = SeqRng::new(1);
        // One fresh sequence of 3 tokens: 1 + 2 + 3 visible pairs.
        let p = step(&[(3, 3)], &mut r);
        assert_eq!(flops(&p), 4.0 * (D * HQ) as f64 * 6.0);
        // 2 new tokens over a cache of 5: positions 3 and 4.
        let p = step(&[(5, 2)], &mut r);
        assert_eq!(flops(&p), 4.0 * (D * HQ) as f64 * 9.0);
    }
}
