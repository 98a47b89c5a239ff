//! `onekernel bench-kvquant`: effective bandwidth of the KV-quant score kernels
//! (quantized bytes read / device time, median of N dispatches after 3 warm-ups on inputs
//! uploaded once) over a decode step's cache: 8 KV heads of L = 16384 and 65536 rows,
//! scored by 8 query heads (one per KV head) and by 32 (GQA 4, the ANCHORS.md decode
//! shape), against the copy bandwidth measured in the same run by the catalogue's
//! `copy_words` kernel, with L2 flushed before each timed launch (`read_words` over
//! 128 MiB, docs/PERFORMANCE.md). The backends take turns
//! on each shape after 20 copies each: a GPU left idle while the host prepares the next
//! inputs lowers its clocks (measured: 660–690 MHz instead of 1980 on the H200 during a
//! Vulkan-only run, 2–4× slower kernels). `--quick` measures TBQ4, QJL and Polar at
//! L = 65536 only. Writes a table and, with --evidence, JSON.
//!
//! Each shape is also timed as a decode step of a 32-layer model would run it: `LAYERS`
//! launches back to back as one timed unit, each over its own copy of the cache (1.2 GB
//! for TBQ4 at L = 65536, far beyond L2, so every layer reads from DRAM), the L2 flushed
//! before the unit only. A kernel's fixed cost — the launch, the ramp of its first wave,
//! its tail — then overlaps the next launch as in an application, where the
//! single-dispatch figure carries it whole; the per-layer time is the unit's median over
//! `LAYERS`. Both figures are reported against the same copy bandwidth.
//!
//! The "of device copy" columns hold every backend to the fastest driver copy of the run
//! (CUDA's `cuMemcpyDtoDAsync` on NVIDIA; NVIDIA's `vkCmdCopyBuffer` reaches 0.85 TB/s on
//! an H100, so Vulkan's own would flatter its rows past 100 %); each backend's own driver
//! copy stays in its header line and in the JSON's `fraction_of_driver_copy`.
//!
//! Each shape's bytes are also read by the catalogue's `read_words`, which does nothing
//! else with them, timed both ways as the kernels are (same flush, same launches): no
//! kernel that must read those bytes can beat it, so where it stays under 70 % of the
//! device copy, ANCHORS.md's goal is out of reach for that shape whatever the kernel
//! (the table's last column and a summary after it say where). Each backend also gets
//! the time of a near-empty dispatch (the launch floor): at L = 16384 a cache is
//! 4–11 MB, where the fixed cost of a timed dispatch is a large part of any kernel's time.

use crate::common::{command_line, open_list, read_manifest, time_layers, unix_time, BenchOptions, Times};
use anyhow::{bail, Result};
use onekernel_cli::harness::{
    driver_copy_api, driver_copy_bytes, driver_copy_gbs, l2_flush, L2_FLUSH_BYTES, L2_FLUSH_METHOD, SMOKE_FLUSH_BYTES, WARMUP,
};
use onekernel_ops::attention::batch::SeqRng;
use onekernel_ops::kvquant::ops::{KvQuantError, TurboFormat};
use onekernel_ops::Device;
use onekernel_runtime::Prelude;

/// A score path of the benchmark.
#[derive(Clone, Copy)]
enum Path {
    Turbo(TurboFormat, bool),
    Qjl,
    Polar,
}

impl Path {
    fn label(self) -> String {
        match self {
            Path::Turbo(f, real) => format!("{f:?}{}", if real { " (real domain)" } else { "" }),
            Path::Qjl => "QJL (q sketch)".into(),
            Path::Polar => "Polar (preht)".into(),
        }
    }

    fn row_bytes(self) -> usize {
        match self {
            Path::Turbo(f, _) => f.row_bytes(),
            Path::Qjl => 34,
            Path::Polar => 82,
        }
    }

    /// Scores `n_heads` query heads (`q`: `[n_heads][128]`, `sketch`: `[n_heads][256]`)
    /// against `rows` of `KV_HEADS` KV heads.
    fn run(self, dev: &mut Device, q: &[f32], sketch: &[f32], rows: &[u8], n_heads: u32) -> Result<(), KvQuantError> {
        match self {
            Path::Turbo(f, real) => dev.turbo_scores(f, real, q, rows, KV_HEADS).map(|_| ()),
            Path::Qjl => dev.qjl_scores(sketch, None, rows, n_heads, KV_HEADS).map(|_| ()),
            Path::Polar => dev.polar_scores(q, rows, KV_HEADS, false, true).map(|_| ()),
        }
    }
}

/// KV heads of the benchmark's cache (ANCHORS.md's decode shape).
const KV_HEADS: u32 = 8;

/// Layers of the per-layer timing: Llama-3-8B's 32, whose layers have the benchmark's
/// 8 KV heads of 128 elements and 32 query heads.
const LAYERS: u32 = 32;

/// Words of the near-empty `copy_words` dispatch whose time is the launch floor: one
/// workgroup.
const FLOOR_WORDS: usize = 1024;

/// A backend's baselines, measured once: `copy_words` over 96 MiB (its median time and
/// bandwidth), the driver's 1 GiB copy, and the launch floor.
#[derive(Clone, Copy)]
struct Copies {
    copy_ns: f64,
    copy_gbs: f64,
    driver_gbs: f64,
    floor_ns: f64,
}

/// `read_words` over one shape's byte count: median ns of one dispatch and of a layer
/// (`LAYERS` back to back, each over its own bytes), timed as the kernels are.
#[derive(Clone, Copy)]
struct SameBytesRead {
    one_ns: f64,
    layer_ns: f64,
}

/// [`SameBytesRead`] of `bytes` bytes (rounded up to words) of `words`.
fn same_bytes_read<'a>(dev: &mut Device<'a>, words: &[u32], bytes: usize, runs: usize, flush: &'a Prelude<'a>) -> Result<SameBytesRead> {
    let n = bytes.div_ceil(4).min(words.len());
    let one_ns = time(dev, runs, flush, |d| d.read_words(&words[..n]).map(|_| ()))?.median;
    let layer_ns = time_per_layer(dev, runs, flush, |d| d.read_words(&words[..n]).map(|_| ()))?;
    Ok(SameBytesRead { one_ns, layer_ns })
}

/// ANCHORS.md's goal for the score kernels: this share of the device copy's bandwidth.
const GOAL: f64 = 0.70;

/// Dispatches `f`'s kernel `runs` + [`WARMUP`] times, each after `flush`.
fn time<'a>(dev: &mut Device<'a>, runs: usize, flush: &'a Prelude<'a>, f: impl FnOnce(&mut Device) -> Result<(), KvQuantError>) -> Result<Times> {
    time_layers(dev, runs, 1, flush, f)
}

/// `f`'s kernel as `LAYERS` layers back to back, `runs` units: the median unit's device
/// time per layer, in ns.
fn time_per_layer<'a>(
    dev: &mut Device<'a>,
    runs: usize,
    flush: &'a Prelude<'a>,
    f: impl FnOnce(&mut Device) -> Result<(), KvQuantError>,
) -> Result<f64> {
    Ok(time_layers(dev, runs, LAYERS, flush, f)?.median / LAYERS as f64)
}

/// A backend's baselines: `copy_words` over `words`, the driver's copy of
/// `driver_bytes` and the launch floor, each run after `flush`.
fn baselines<'a>(dev: &mut Device<'a>, words: &[u32], driver_bytes: u64, runs: usize, flush: &'a Prelude<'a>) -> Result<Copies> {
    // Inputs are uploaded right before each launch; reading 128 MiB in between
    // evicts them from L2, so every timed run reads its quantized cache from DRAM.
    let driver_gbs = driver_copy_gbs(dev.backend_mut(), driver_bytes, Some(flush))?.unwrap_or(f64::NAN);
    let copy_ns = time(dev, runs.min(20), flush, |d| d.copy_words(words).map(|_| ()))?.median;
    let copy_gbs = 2.0 * (words.len() * 4) as f64 / copy_ns;
    let floor_ns = time(dev, runs, flush, |d| d.copy_words(&words[..FLOOR_WORDS]).map(|_| ()))?.median;
    eprintln!(
        "{}: copy bandwidth (copy_words, 96 MiB, read + write) {copy_gbs:.1} GB/s; driver copy ({} MiB) {driver_gbs:.1} GB/s; launch floor (copy_words of {} bytes) {:.2} µs",
        dev.backend().name(),
        driver_bytes >> 20,
        FLOOR_WORDS * 4,
        floor_ns / 1e3
    );
    Ok(Copies { copy_ns, copy_gbs, driver_gbs, floor_ns })
}

/// One backend's results, printed and written as evidence.
struct Report<'a> {
    info: onekernel_runtime::DeviceInfo,
    copies: Copies,
    device_gbs: f64,
    driver_bytes: u64,
    table: &'a str,
    out_of_reach: &'a [String],
}

impl Report<'_> {
    /// The baselines, the table and the shapes out of reach.
    fn print(&self) {
        let Copies { copy_gbs, driver_gbs, floor_ns, .. } = self.copies;
        let (info, device_gbs, driver_bytes) = (&self.info, self.device_gbs, self.driver_bytes);
        println!(
        "\n{}: copy bandwidth (copy_words, 96 MiB, read + write) {copy_gbs:.1} GB/s; driver copy ({} MiB, read + write) {driver_gbs:.1} GB/s; launch floor (copy_words of {} bytes) {:.2} µs",
        info.backend,
        driver_bytes >> 20,
        FLOOR_WORDS * 4,
        floor_ns / 1e3
    );
        println!("device copy (the fastest driver copy of the run, read + write): {device_gbs:.1} GB/s");
        println!("| backend | kernel | L | Hq / Hkv | bytes read | median µs (min – max) | GB/s | of copy | of device copy | per layer µs ({LAYERS} layers) | GB/s | of device copy | read of the same bytes µs: one / per layer | its share of device copy | kernel at: of the read's speed |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
        print!("{}", self.table);
        if self.out_of_reach.is_empty() {
            println!("\n{}: the read of every shape's bytes reaches {:.0} % of the device copy both ways.", info.backend, 100.0 * GOAL);
        } else {
            println!(
                "\n{}: {:.0} % of the device copy is out of reach for any kernel where even reading the bytes misses it:",
                info.backend,
                100.0 * GOAL
            );
            for line in self.out_of_reach {
                println!("- {line}");
            }
        }
    }

    /// `bench-kvquant-<backend>.json` in `dir`.
    fn write_evidence(&self, dir: &std::path::Path, runs: usize, smoke: bool, records: &[serde_json::Value]) -> Result<()> {
        let Copies { copy_ns, copy_gbs, driver_gbs, floor_ns } = self.copies;
        let (info, device_gbs, driver_bytes) = (&self.info, self.device_gbs, self.driver_bytes);
        let doc = serde_json::json!({
            "command": command_line(), "unix_time": unix_time(), "device": info, "runs": runs, "warmup": WARMUP,
            "clock_warmup": "20 copy_words dispatches (96 MiB) before each measurement; backends take turns per shape",
            "copy": {"kernel": "copy_words", "bytes": if smoke { 1u64 << 18 } else { 96u64 << 20 }, "median_ns": copy_ns, "gb_per_s": copy_gbs},
            "driver_copy": {"api": driver_copy_api(&info.backend), "bytes": driver_bytes, "gb_per_s": driver_gbs}, "l2_flush_bytes": if smoke { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES }, "l2_flush": L2_FLUSH_METHOD, "smoke_test": smoke,
            "device_copy": {"what": "the fastest driver copy of any backend in this run", "gb_per_s": device_gbs},
            "launch_floor": {"kernel": "copy_words", "bytes": FLOOR_WORDS * 4, "median_ns": floor_ns},
            "per_layer": format!("per result: {LAYERS} launches back to back as one timed unit (a decode step's layers), each over its own copy of the cache, L2 flushed before the unit; the unit's median time / {LAYERS}"),
            "same_bytes_read": "per result: read_words over bytes_read bytes, nothing else done with them, timed as the kernel (one dispatch; per layer); no kernel that must read those bytes can be faster",
            "goal": {"fraction_of_device_copy": GOAL, "out_of_reach": self.out_of_reach},
            "results": records,
        });
        crate::common::write_evidence(dir, &format!("bench-kvquant-{}.json", info.backend), &doc)
    }
}

/// Runs the benchmark; `Ok(true)` when it ran (targets are reported, not enforced).
pub fn bench_kvquant_cmd(args: &[String]) -> Result<bool> {
    let options = BenchOptions::parse("bench-kvquant", args, true)?;
    // Its own word for --shape first (its lengths are fixed), then the other options of
    // `onekernel bench`.
    if !options.shapes.is_empty() {
        bail!("bench-kvquant has no --shape (its lengths are fixed by ANCHORS.md; --quick picks 65536)");
    }
    options.reject_attention_options()?;
    let BenchOptions { backends, backends_named, runs, out, evidence, quick, smoke, .. } = options;
    let runs = runs as usize;
    if smoke {
        eprintln!("--smoke: a check of the launch paths at a small shape; the figures below are not measurements");
    }
    let manifest = read_manifest(&out)?;
    let flush = l2_flush(&manifest, &out, if smoke { SMOKE_FLUSH_BYTES } else { L2_FLUSH_BYTES })?;
    let paths = [
        Path::Turbo(TurboFormat::Turbo3, false),
        Path::Turbo(TurboFormat::Tbq3, false),
        Path::Turbo(TurboFormat::Tbq3, true),
        Path::Turbo(TurboFormat::Turbo4Legacy, false),
        Path::Turbo(TurboFormat::Tbq4, false),
        Path::Turbo(TurboFormat::Tbq4, true),
        Path::Turbo(TurboFormat::Tcq, false),
        Path::Qjl,
        Path::Polar,
    ];
    // --quick: the three kernels ANCHORS.md names, at the longer length only.
    let quick_paths = [Path::Turbo(TurboFormat::Tbq4, false), Path::Qjl, Path::Polar];
    let (paths, lengths): (&[Path], &[usize]) = match (smoke, quick) {
        // --smoke: every path at a length of two score tiles and a partial one.
        (true, _) => (&paths, &[300]),
        (false, true) => (&quick_paths, &[65536]),
        (false, false) => (&paths, &[16384, 65536]),
    };
    let mut r = SeqRng::new(0xbe7c);
    let max_heads = 4 * KV_HEADS as usize;
    let q: Vec<f32> = (0..128 * max_heads).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let sketch: Vec<f32> = (0..256 * max_heads).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let mut opened = open_list(&backends, backends_named)?;
    // 96 MiB: beyond any L2 of these GPUs (50 MB), and within Vulkan's usual 128 MiB
    // storage-buffer range, so this is DRAM bandwidth (read + write).
    let words: Vec<u32> = (0..if smoke { 1u32 << 16 } else { 24u32 << 20 }).map(|i| i.wrapping_mul(2_654_435_761)).collect();
    let mut copies = Vec::new();
    let driver_bytes = driver_copy_bytes(smoke);
    for b in opened.iter_mut() {
        let mut dev = Device::new(b.as_mut(), &manifest, &out);
        copies.push(baselines(&mut dev, &words, driver_bytes, runs, &flush)?);
    }
    // The device's copy bandwidth: the fastest driver copy of any backend in this run.
    let device_gbs = copies.iter().map(|c| c.driver_gbs).filter(|g| g.is_finite()).fold(f64::NAN, f64::max);
    let mut records: Vec<Vec<serde_json::Value>> = vec![Vec::new(); opened.len()];
    let mut table = vec![String::new(); opened.len()];
    let mut reads: Vec<std::collections::HashMap<usize, SameBytesRead>> = vec![Default::default(); opened.len()];
    // Shapes (backend, kernel, L) whose read of the same bytes misses the goal: one
    // dispatch, per layer.
    let mut out_of_reach: Vec<Vec<String>> = vec![Vec::new(); opened.len()];
    for &l in lengths {
        for &p in paths {
            let bytes: Vec<u8> = (0..KV_HEADS as usize * l * p.row_bytes()).map(|_| (r.below(256)) as u8).collect();
            for hq in [KV_HEADS, 4 * KV_HEADS] {
                let n = hq as usize;
                // The backends take turns on each shape, so a measurement never starts on a
                // GPU left idle (and down-clocked) by the host's preparation; a warm-up of
                // 20 copies before each keeps the clocks up.
                for (i, b) in opened.iter_mut().enumerate() {
                    let name = b.name();
                    let mut dev = Device::new(b.as_mut(), &manifest, &out);
                    time(&mut dev, 20, &flush, |d| d.copy_words(&words).map(|_| ()))?;
                    let t = time(&mut dev, runs, &flush, |d| p.run(d, &q[..128 * n], &sketch[..256 * n], &bytes, hq))?;
                    let layer_ns = time_per_layer(&mut dev, runs, &flush, |d| p.run(d, &q[..128 * n], &sketch[..256 * n], &bytes, hq))?;
                    // Measured once per backend and byte count (both head counts read the
                    // same cache), right after the first kernel that reads it.
                    let read = match reads[i].get(&bytes.len()) {
                        Some(&c) => c,
                        None => {
                            let c = same_bytes_read(&mut dev, &words, bytes.len(), runs, &flush)?;
                            reads[i].insert(bytes.len(), c);
                            c
                        }
                    };
                    let Copies { copy_gbs, driver_gbs, .. } = copies[i];
                    let gbs = bytes.len() as f64 / t.median;
                    let layer_gbs = bytes.len() as f64 / layer_ns;
                    let read_gbs = bytes.len() as f64 / read.one_ns;
                    let read_layer_gbs = bytes.len() as f64 / read.layer_ns;
                    if hq == KV_HEADS && (read_gbs < GOAL * device_gbs || read_layer_gbs < GOAL * device_gbs) {
                        out_of_reach[i].push(format!(
                            "{} at L = {l}: the read reaches {:.1} % (one dispatch) and {:.1} % (per layer)",
                            p.label(),
                            100.0 * read_gbs / device_gbs,
                            100.0 * read_layer_gbs / device_gbs
                        ));
                    }
                    let row = format!(
                        "| {name} | {} | {l} | {hq} / {KV_HEADS} | {} | {:.1} ({:.1} – {:.1}) | {gbs:.1} | {:.1} % | {:.1} % | {:.2} | {layer_gbs:.1} | {:.1} % | {:.2} / {:.2} | {:.1} % / {:.1} % | {:.1} % / {:.1} % |",
                        p.label(),
                        bytes.len(),
                        t.median / 1e3,
                        t.min / 1e3,
                        t.max / 1e3,
                        100.0 * gbs / copy_gbs,
                        100.0 * gbs / device_gbs,
                        layer_ns / 1e3,
                        100.0 * layer_gbs / device_gbs,
                        read.one_ns / 1e3,
                        read.layer_ns / 1e3,
                        100.0 * read_gbs / device_gbs,
                        100.0 * read_layer_gbs / device_gbs,
                        100.0 * read.one_ns / t.median,
                        100.0 * read.layer_ns / layer_ns
                    );
                    eprintln!("{row}");
                    table[i] += &(row + "\n");
                    records[i].push(serde_json::json!({
                        "kernel": p.label(), "rows": l, "n_heads": hq, "n_kv_heads": KV_HEADS, "bytes_read": bytes.len(),
                        "median_ns": t.median, "min_ns": t.min, "max_ns": t.max, "gb_per_s": gbs,
                        "fraction_of_copy": gbs / copy_gbs, "fraction_of_driver_copy": gbs / driver_gbs, "fraction_of_device_copy": gbs / device_gbs,
                        "per_layer": {"layers": LAYERS, "ns": layer_ns, "gb_per_s": layer_gbs, "fraction_of_driver_copy": layer_gbs / driver_gbs, "fraction_of_device_copy": layer_gbs / device_gbs},
                        "same_bytes_read": {
                            "one_dispatch_ns": read.one_ns, "one_dispatch_gb_per_s": read_gbs, "one_dispatch_fraction_of_device_copy": read_gbs / device_gbs,
                            "per_layer_ns": read.layer_ns, "per_layer_gb_per_s": read_layer_gbs, "per_layer_fraction_of_device_copy": read_layer_gbs / device_gbs,
                        },
                        "fraction_of_same_bytes_read": {"one_dispatch": read.one_ns / t.median, "per_layer": read.layer_ns / layer_ns},
                    }));
                }
            }
        }
    }
    for (i, b) in opened.iter_mut().enumerate() {
        let report = Report { info: b.info().clone(), copies: copies[i], device_gbs, driver_bytes, table: &table[i], out_of_reach: &out_of_reach[i] };
        report.print();
        if let Some(dir) = &evidence {
            report.write_evidence(dir, runs, smoke, &records[i])?;
        }
    }
    Ok(true)
}
