//! `onekernel bench-formats`: the large-model formats on the GPU machine.
//!
//! * FP8 and mixed-row decode attention (`attn_decode_wide` + `attn_decode_combine`):
//!   Hq 128, Hkv 1, D 512, `fp8_e4m3` and `fp8_mixed` (448 E4M3 + 64 bf16 dimensions)
//!   K and V, B ∈ {1, 16}, L ∈ {2048, 32768}, pages of 16 in a random permutation, fast
//!   (chunks sized to the launch) and deterministic; the decode step (both kernels back to
//!   back) timed as one unit after an L2 flush, median of `--runs`. Reported as the K + V
//!   bytes over the time against the driver copy of the same run, and as FLOP/s
//!   (2 · Hq · L · (Dk + Dv) per sequence): the shape does 128 heads' work per byte read.
//! * NVFP4 GEMV (`nvfp4_gemv_*`): `y = W·x` for N × K of 4096 × 4096, 14336 × 4096 and
//!   4096 × 14336 with f32, bf16 and NVFP4 activations, one dispatch after an L2 flush,
//!   reported as the weight bytes (packed values + block scales) over the time. The f16
//!   GEMV anchor (cuBLAS through PyTorch, `cli/anchors/gemv_f16.py`) runs beside this
//!   program in the same device call (`scripts/gpu-evidence.sh`, part `formats`).

use crate::common::{
    command_line, driver_copies, driver_copies_json, open_list, read_manifest, shuffled_pages, time_layers, unix_time, write_evidence, BenchOptions,
    Xorshift,
};
use anyhow::{Context, Result};
use onekernel_cli::harness::{driver_copy_bytes, l2_flush, L2_FLUSH_BYTES, L2_FLUSH_METHOD, SMOKE_FLUSH_BYTES, WARMUP};
use onekernel_ops::attention::batch::SeqRng;
use onekernel_ops::attention::{DecodeProblem, KvFormat, Split};
use onekernel_ops::nvfp4::{Activation, Nvfp4};
use onekernel_ops::Device;

const HQ: u32 = 128;
const D: u32 = 512;
const PAGE: u32 = 16;
/// Workgroups the fast split aims for: two per SM of a 132-SM H100/H200.
const TARGET_GROUPS: u32 = 264;

/// A paged cache of `b` sequences of `l` tokens in `format`: rows with scale 1/64 and
/// random E4M3 bytes (never the NaN code) and bf16 values in ±[1/8, 1/4).
fn problem(b: u32, l: u32, format: KvFormat, r: &mut SeqRng) -> DecodeProblem {
    let pps = l.div_ceil(PAGE);
    let n_pages = (b * pps) as usize;
    let rows = n_pages * PAGE as usize;
    let rb = format.row_bytes(D as usize);
    let f8 = format.fp8_dims(D) as usize;
    let mut x = Xorshift::from(r);
    let mut image = |_: ()| -> Vec<u8> {
        let mut v = vec![0u8; rows * rb];
        for row in v.chunks_mut(rb) {
            row[..4].copy_from_slice(&(1.0f32 / 64.0).to_le_bytes());
            for c in row[4..4 + f8].chunks_mut(8) {
                let w = (x.next_u64() & 0xbfbf_bfbf_bfbf_bfbf).to_le_bytes();
                c.copy_from_slice(&w[..c.len()]);
            }
            for c in row[4 + f8..].chunks_mut(2) {
                c.copy_from_slice(&((((x.next_u64() >> 16) as u16) & 0x807f) | 0x3e00).to_le_bytes());
            }
        }
        v
    };
    let (k, v) = (image(()), image(()));
    let phys = shuffled_pages(n_pages, r);
    DecodeProblem {
        head_dim: D,
        n_heads: HQ,
        n_kv_heads: 1,
        page_size: PAGE,
        pages_per_seq: pps,
        kv_len: vec![l; b as usize],
        k_format: format,
        v_format: format,
        k,
        v,
        block_table: Some(phys),
        q: (0..b * HQ * D).map(|_| r.range(-1.0, 1.0) as f32).collect(),
        scale: 1.0 / (D as f32).sqrt(),
        softcap: 0.0,
        max_bias: 0.0,
        mask: None,
        sinks: None,
        v_head_dim: None,
    }
}

/// The fast split's chunk for `b` sequences of `l` tokens: the multiple of 128 (128 …
/// 512) whose launch is closest above [`TARGET_GROUPS`] workgroups (eight head blocks
/// of 16 per sequence), so that long sequences write fewer partial rows.
pub fn wide_fast_chunk(b: u32, l: u32, n_heads: u32) -> u32 {
    let blocks = b * n_heads.div_ceil(16);
    [512u32, 384, 256, 128].into_iter().find(|&c| blocks * l.div_ceil(c) >= TARGET_GROUPS).unwrap_or(128)
}

/// A random NVFP4 matrix: scale codes 0x28 … 0x2f (2⁻² … 2⁻¹·1.875), random nibbles.
fn nvfp4(rows: usize, cols: usize, r: &mut SeqRng) -> Nvfp4 {
    let mut x = Xorshift::from(r);
    let packed = (0..rows * cols / 2).map(|_| x.next_u64() as u8).collect();
    let scales = (0..rows * cols / 16).map(|_| 0x28 | (x.next_u64() as u8 & 7)).collect();
    Nvfp4 { rows, cols, packed, scales, global: 1.0 / 256.0 }
}

/// Runs the benchmark; `Ok(true)` when it ran.
pub fn bench_formats_cmd(args: &[String]) -> Result<bool> {
    let options = BenchOptions::parse("bench-formats", args, true)?;
    options.reject_attention_options()?;
    let BenchOptions { backends, backends_named, runs, out, evidence, quick, smoke, .. } = options;
    let runs = runs as usize;
    let small = quick || smoke;
    if small {
        eprintln!("--quick/--smoke: a check of the launch paths at small shapes; the figures below are not measurements");
    }
    let manifest = read_manifest(&out)?;
    let flush = l2_flush(&manifest, &out, if small { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES })?;
    let mut opened = open_list(&backends, backends_named)?;
    let driver_bytes = driver_copy_bytes(small);
    let (driver, device_gbs) = driver_copies(&mut opened, driver_bytes, &flush)?;
    let mut r = SeqRng::new(0xf8f8);
    let mut records = Vec::new();
    let mut rows = String::new();
    let decode_shapes: &[(u32, u32)] = if small { &[(1, 300)] } else { &[(1, 2048), (1, 32768), (16, 2048), (16, 32768)] };
    let formats = [KvFormat::Fp8E4m3, KvFormat::Fp8Mixed { fp8_dims: 448 }];
    for &(bsz, l) in decode_shapes {
        for format in formats {
            let p = problem(bsz, l, format, &mut r);
            let bytes = (2 * bsz * l) as f64 * format.row_bytes(D as usize) as f64;
            let flops = 2.0 * (HQ * bsz) as f64 * l as f64 * (2 * D) as f64;
            let chunk = wide_fast_chunk(bsz, l, HQ);
            for (mode, split) in [("fast", Split::Fast { chunk_tokens: chunk }), ("deterministic", Split::Deterministic)] {
                for be in opened.iter_mut() {
                    let name = be.name();
                    let mut dev = Device::new(be.as_mut(), &manifest, &out);
                    let t = time_layers(&mut dev, runs, 1, &flush, |d| p.run(split, d).map(|_| ()))
                        .with_context(|| format!("{name}: {} B {bsz} L {l} {mode}", format.name()))?;
                    let gbs = bytes / t.median;
                    let row = format!(
                        "| {name} | {} | {bsz} × {l} | {mode} | {} | {:.1} | {gbs:.0} | {:.1} % | {:.2} |",
                        format.name(),
                        if mode == "fast" {
                            chunk
                        } else if l > 2048 {
                            256
                        } else {
                            128
                        },
                        t.median / 1e3,
                        100.0 * gbs / device_gbs,
                        flops / t.median / 1e3
                    );
                    eprintln!("{row}");
                    rows += &(row + "\n");
                    records.push(serde_json::json!({
                        "part": "decode", "backend": name, "device": dev.backend().info(), "format": format.name(), "fp8_dims": format.fp8_dims(D),
                        "batch": bsz, "kv_len": l, "n_heads": HQ, "n_kv_heads": 1, "head_dim": D, "page_size": PAGE, "mode": mode,
                        "chunk_tokens": if mode == "fast" { chunk } else if l > 2048 { 256 } else { 128 },
                        "step_median_ns": t.median, "step_min_ns": t.min, "step_max_ns": t.max, "kv_bytes": bytes, "gb_per_s": gbs,
                        "fraction_of_device_copy": gbs / device_gbs, "flops": flops, "tflop_per_s": flops / t.median / 1e3,
                    }));
                }
            }
        }
    }
    println!("device copy (the fastest driver copy of the run, read + write): {device_gbs:.1} GB/s");
    println!("FP8 decode attention, paged (pages of 16), Hq 128, Hkv 1, D 512; decode step after an L2 flush:");
    println!("| backend | format | B × L | mode | chunk | µs | K+V GB/s | of device copy | TFLOP/s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    print!("{rows}");
    let gemv_shapes: &[(usize, usize)] = if small { &[(64, 256)] } else { &[(4096, 4096), (14336, 4096), (4096, 14336)] };
    let mut rows = String::new();
    for &(n, k) in gemv_shapes {
        let w = nvfp4(n, k, &mut r);
        let x: Vec<f32> = (0..k).map(|_| r.range(-1.0, 1.0) as f32).collect();
        let xq = nvfp4(1, k, &mut r);
        let bytes = (w.packed.len() + w.scales.len()) as f64;
        for (act, a) in [("f32", Activation::F32(&x)), ("bf16", Activation::Bf16(&x)), ("nvfp4", Activation::Nvfp4(&xq))] {
            for be in opened.iter_mut() {
                let name = be.name();
                let mut dev = Device::new(be.as_mut(), &manifest, &out);
                let t = time_layers(&mut dev, runs, 1, &flush, |d| d.nvfp4_gemv(&w, a).map(|_| ()))
                    .with_context(|| format!("{name}: GEMV {n} × {k} {act}"))?;
                let gbs = bytes / t.median;
                let row = format!("| {name} | {n} × {k} | {act} | {:.2} | {gbs:.0} | {:.1} % |", t.median / 1e3, 100.0 * gbs / device_gbs);
                eprintln!("{row}");
                rows += &(row + "\n");
                records.push(serde_json::json!({
                    "part": "nvfp4_gemv", "backend": name, "device": dev.backend().info(), "rows": n, "cols": k, "activation": act,
                    "weight_bytes": bytes, "median_ns": t.median, "min_ns": t.min, "max_ns": t.max, "gb_per_s": gbs, "fraction_of_device_copy": gbs / device_gbs,
                }));
            }
        }
    }
    println!("\nNVFP4 GEMV (one workgroup per row), one dispatch after an L2 flush; weight bytes = packed values + E4M3 block scales:");
    println!("| backend | N × K | activation | µs | weight GB/s | of device copy |");
    println!("|---|---|---|---|---|---|");
    print!("{rows}");
    if let Some(dir) = evidence {
        let copies = driver_copies_json(&opened, &driver, driver_bytes);
        let doc = serde_json::json!({
            "command": command_line(), "unix_time": unix_time(), "runs": runs, "warmup": WARMUP,
            "driver_copies": copies, "device_copy_gb_per_s": device_gbs, "l2_flush_bytes": if small { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES }, "l2_flush": L2_FLUSH_METHOD, "smoke_test": small,
            "results": records,
        });
        write_evidence(&dir, "bench-formats.json", &doc)?;
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fast_chunk_fills_the_device_and_stays_long_where_it_can() {
        // B 1, L 2048: 8 head blocks × 16 chunks of 128 = 128 workgroups at most.
        assert_eq!(wide_fast_chunk(1, 2048, 128), 128);
        // B 1, L 32768: 512-token chunks give 8 × 64 = 512 workgroups.
        assert_eq!(wide_fast_chunk(1, 32768, 128), 512);
        // B 16, L 2048: 128 blocks × 4 chunks of 512 = 512.
        assert_eq!(wide_fast_chunk(16, 2048, 128), 512);
    }
}
