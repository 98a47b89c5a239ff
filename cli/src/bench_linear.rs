//! `onekernel bench-linear`: the decode step of a gated-delta-net layer (T = 1, S = 128,
//! H = 32 value heads, Hk ∈ {16, 32} q/k heads, B ∈ {1, 16, 64} sequences) with the fused
//! state gather and in-place write-back, against the driver copy measured in the same
//! run. The state dominates the bytes (2 MiB read + 2 MiB written per sequence); the
//! figure counts every byte the kernel must move (states, q, k, v, gates, output).
//!
//! Each shape is timed as one dispatch (median of N after 3 warm-ups, L2 flushed before
//! each by `read_words` over 128 MiB) and as `LAYERS` layers back to back, each over its
//! own state cache, L2 flushed before the unit (a decode step's recurrent layers); the
//! per-layer figure is the unit's median / `LAYERS`. The cache holds B + 8 slots and the
//! sequences read a shuffled subset, as a serving engine's recurrent cache would. The
//! backends take turns on each shape after 20 copies each (clocks stay up). Beside each
//! shape the generated `copy_words` copies the states' bytes (read + write), timed the
//! same two ways: what a generated kernel moving those bytes with 4-byte accesses gets
//! from the memory system on that backend. The ggml-
//! style CUDA anchor runs beside this program (`cli/anchors/gdn_ggml.cu`, same shapes,
//! same flush and timing method; `scripts/gpu-evidence.sh`, part `linear`).

use crate::common::{
    command_line, driver_copies, driver_copies_json, open_list, read_manifest, time_layers, unix_time, write_evidence, BenchOptions,
};
use anyhow::{Context, Result};
use onekernel_cli::harness::{driver_copy_bytes, l2_flush, L2_FLUSH_BYTES, L2_FLUSH_METHOD, SMOKE_FLUSH_BYTES, WARMUP};
use onekernel_ops::attention::batch::SeqRng;
use onekernel_ops::linear::{GdnInputs, LinearError};
use onekernel_ops::{Device, Timing};
use onekernel_runtime::Prelude;

/// Layers of the per-layer timing (a hybrid model's recurrent layers of one step; 16
/// keeps B = 64's caches, 144 MiB each, within 2.3 GB).
const LAYERS: u32 = 16;
/// Value heads and head size (Qwen3-Next's).
const HEADS: u32 = 32;
const HEAD_SIZE: u32 = 128;
/// Slots beyond the batch in the state cache.
const SPARE_SLOTS: u32 = 8;
/// The target: share of the device copy at B = 16 and 64.
const GOAL: f64 = 0.85;

/// A decode step of `b` sequences over `hk` q/k heads, its cache and slot table.
struct Shape {
    x: GdnInputs,
    cache: Vec<f32>,
    slots: Vec<i32>,
}

impl Shape {
    fn new(b: u32, hk: u32, r: &mut SeqRng) -> Shape {
        let (s, h) = (HEAD_SIZE, HEADS);
        let mut vals = |n: u32, lo: f64, hi: f64| -> Vec<f32> { (0..n).map(|_| r.range(lo, hi) as f32).collect() };
        let x = GdnInputs {
            s_v: s,
            n_heads: h,
            n_k_heads: hk,
            n_tokens: 1,
            n_seqs: b,
            kda: false,
            q: vals(b * hk * s, -0.1, 0.1),
            k: vals(b * hk * s, -0.1, 0.1),
            v: vals(b * h * s, -1.0, 1.0),
            g: vals(b * h, -0.1, 0.0),
            beta: vals(b * h, 0.0, 1.0),
            raw_gates: None,
        };
        let n_slots = b + SPARE_SLOTS;
        let cache = vals(n_slots * h * s * s, -0.5, 0.5);
        // A shuffled subset of the slots.
        let mut pool: Vec<i32> = (0..n_slots as i32).collect();
        for i in (1..pool.len()).rev() {
            pool.swap(i, r.below(i as u32 + 1) as usize);
        }
        pool.truncate(b as usize);
        Shape { x, cache, slots: pool }
    }

    /// Bytes the kernel must move: each state read and written, the inputs read, the
    /// output written.
    fn bytes(&self) -> usize {
        let x = &self.x;
        4 * (2 * x.n_seqs as usize * x.state_len() + x.q.len() + x.k.len() + x.v.len() + x.g.len() + x.beta.len() + x.v.len() + x.n_seqs as usize)
    }
}

/// Times `f`'s launch `runs` + [`WARMUP`] times as `layers` layers; the median unit's
/// device time per layer in ns.
fn time<'a, E: std::error::Error + Send + Sync + 'static>(
    dev: &mut Device<'a>,
    runs: usize,
    layers: u32,
    flush: &'a Prelude<'a>,
    f: impl FnOnce(&mut Device) -> Result<(), E>,
) -> Result<f64> {
    Ok(time_layers(dev, runs, layers, flush, f)?.median / layers as f64)
}

/// The fused step of `shape` (gather and write-back through the shuffled slots).
fn step(dev: &mut Device, shape: &Shape) -> Result<(), LinearError> {
    let mut cache = shape.cache.clone();
    dev.gated_delta_net_cached(&shape.x, &mut cache, Some(&shape.slots), true).map(|_| ())
}

/// Runs the benchmark; `Ok(true)` when it ran (targets are reported, not enforced).
pub fn bench_linear_cmd(args: &[String]) -> Result<bool> {
    let options = BenchOptions::parse("bench-linear", args, true)?;
    options.reject_attention_options()?;
    let BenchOptions { backends, backends_named, runs, out, evidence, quick, smoke, .. } = options;
    let runs = runs as usize;
    if smoke {
        eprintln!("--smoke: a check of the launch paths at a small shape; the figures below are not measurements");
    }
    let manifest = read_manifest(&out)?;
    let flush = l2_flush(&manifest, &out, if smoke { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES })?;
    let mut opened = open_list(&backends, backends_named)?;
    let driver_bytes = driver_copy_bytes(quick || smoke);
    let (driver, device_gbs) = driver_copies(&mut opened, driver_bytes, &flush)?;
    let batches: &[u32] = match (smoke, quick) {
        (true, _) => &[2],
        (false, true) => &[16],
        (false, false) => &[1, 16, 64],
    };
    let mut r = SeqRng::new(0x6d7);
    // The clock warm-up's copy and the states' same-bytes copy (B = 64: 128 MiB).
    let words: Vec<u32> = (0..batches.iter().max().copied().unwrap_or(1) * HEADS * HEAD_SIZE * HEAD_SIZE).collect();
    let warm = &words[..words.len().min(if smoke { 1 << 16 } else { 24 << 20 })];
    let mut rows = String::new();
    let mut records = Vec::new();
    for &b in batches {
        for hk in [16u32, 32] {
            let shape = Shape::new(b, hk, &mut r);
            let bytes = shape.bytes();
            for be in opened.iter_mut() {
                let name = be.name();
                let mut dev = Device::new(be.as_mut(), &manifest, &out);
                dev.set_timing(Some(Timing { runs: 20, layers: 1, apart: false, prelude: None }));
                dev.copy_words(warm).context("clock warm-up")?;
                dev.set_timing(None);
                let one = time(&mut dev, runs, 1, &flush, |d| step(d, &shape))?;
                let layer = time(&mut dev, runs.min(20), LAYERS, &flush, |d| step(d, &shape))?;
                // The generated copy of the states' bytes (read + write), timed alike.
                let state_words = &words[..b as usize * shape.x.state_len()];
                let copy_one = time(&mut dev, runs, 1, &flush, |d| d.copy_words(state_words).map(|_| ()))?;
                let copy_layer = time(&mut dev, runs.min(20), LAYERS, &flush, |d| d.copy_words(state_words).map(|_| ()))?;
                let (g1, gl) = (bytes as f64 / one, bytes as f64 / layer);
                let copy_bytes = 8.0 * state_words.len() as f64;
                let (c1, cl) = (copy_bytes / copy_one, copy_bytes / copy_layer);
                let row = format!(
                    "| {name} | {b} | 32 / {hk} | {bytes} | {:.2} | {g1:.1} | {:.1} % | {:.2} | {gl:.1} | {:.1} % | {:.1} % / {:.1} % |",
                    one / 1e3,
                    100.0 * g1 / device_gbs,
                    layer / 1e3,
                    100.0 * gl / device_gbs,
                    100.0 * c1 / device_gbs,
                    100.0 * cl / device_gbs
                );
                eprintln!("{row}");
                rows += &(row + "\n");
                records.push(serde_json::json!({
                    "backend": name, "device": dev.backend().info(), "n_seqs": b, "n_heads": HEADS, "n_k_heads": hk, "head_size": HEAD_SIZE,
                    "n_tokens": 1, "cache_slots": b + SPARE_SLOTS, "bytes_moved": bytes,
                    "one_dispatch": {"median_ns": one, "gb_per_s": g1, "fraction_of_device_copy": g1 / device_gbs},
                    "per_layer": {"layers": LAYERS, "ns": layer, "gb_per_s": gl, "fraction_of_device_copy": gl / device_gbs},
                    "same_bytes_copy": {"kernel": "copy_words", "bytes": copy_bytes,
                        "one_dispatch_ns": copy_one, "one_dispatch_fraction_of_device_copy": c1 / device_gbs,
                        "per_layer_ns": copy_layer, "per_layer_fraction_of_device_copy": cl / device_gbs},
                }));
            }
        }
    }
    println!("device copy (the fastest driver copy of the run, read + write): {device_gbs:.1} GB/s; target at B = 16 and 64: {:.0} %", 100.0 * GOAL);
    println!(
        "| backend | B | H / Hk | bytes moved | one dispatch µs | GB/s | of device copy | per layer µs ({LAYERS} layers) | GB/s | of device copy | copy_words of the states' bytes: of device copy, one / per layer |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    print!("{rows}");
    if let Some(dir) = evidence {
        let copies = driver_copies_json(&opened, &driver, driver_bytes);
        let doc = serde_json::json!({
            "command": command_line(), "unix_time": unix_time(), "runs": runs, "warmup": WARMUP,
            "kernel": "gated_delta_net, fused state gather and in-place write-back (slots shuffled, B + 8 cache slots), T = 1, S = 128, H = 32",
            "driver_copies": copies, "device_copy_gb_per_s": device_gbs, "l2_flush_bytes": if smoke { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES }, "l2_flush": L2_FLUSH_METHOD, "smoke_test": smoke,
            "goal": {"fraction_of_device_copy": GOAL, "at_batches": [16, 64]},
            "results": records,
        });
        write_evidence(&dir, "bench-linear.json", &doc)?;
    }
    Ok(true)
}
