//! `onekernel bench-kvquant`: effective bandwidth of the KV-quant score kernels
//! (quantized bytes read / device time, median of N dispatches after 3 warm-ups on inputs
//! uploaded once) at
//! L = 16384 and 65536 rows, against the copy bandwidth measured in the same run by the
//! catalogue's `copy_words` kernel, with L2 flushed before each timed launch. Writes a
//! table and, with --evidence, JSON.

use crate::common::{command_line, median, open_list, read_manifest, unix_time, BenchOptions};
use anyhow::{bail, Context, Result};
use onekernel_runtime::attention::batch::SeqRng;
use onekernel_runtime::kvquant::ops::{Device, KvQuantError, TurboFormat};

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

    fn run(self, dev: &mut Device, q: &[f32], sketch: &[f32], rows: &[u8]) -> Result<(), KvQuantError> {
        match self {
            Path::Turbo(f, real) => dev.turbo_scores(f, real, q, rows).map(|_| ()),
            Path::Qjl => dev.qjl_scores(sketch, None, rows, 1, 1).map(|_| ()),
            Path::Polar => dev.polar_scores(q, rows, false, true).map(|_| ()),
        }
    }
}

/// Dispatches `f`'s kernel `runs` + 3 times on inputs uploaded once; the median device
/// time in ns of the last `runs`.
fn time(dev: &mut Device, runs: usize, f: impl FnOnce(&mut Device) -> Result<(), KvQuantError>) -> Result<f64> {
    dev.set_repeat(runs as u32 + 3);
    f(dev)?;
    dev.set_repeat(1);
    let ns: Vec<f64> = dev.last_times().iter().skip(3).copied().filter(|t| t.is_finite()).collect();
    if ns.is_empty() {
        bail!("{} does not measure device time", dev.backend_name());
    }
    Ok(median(&ns))
}

/// Runs the benchmark; `Ok(true)` when it ran (targets are reported, not enforced).
pub fn bench_kvquant_cmd(args: &[String]) -> Result<bool> {
    let BenchOptions { backends, runs, out, evidence, .. } = BenchOptions::parse(args, false)?;
    let runs = runs as usize;
    let manifest = read_manifest(&out)?;
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
    let mut r = SeqRng::new(0xbe7c);
    let q: Vec<f32> = (0..128).map(|_| r.range(-1.0, 1.0) as f32).collect();
    let sketch: Vec<f32> = (0..256).map(|_| r.range(-1.0, 1.0) as f32).collect();
    for mut b in open_list(&backends)? {
        let info = b.info().clone();
        // Inputs are uploaded right before each launch; writing 128 MiB in between
        // evicts them from L2, so every timed run reads its quantized cache from DRAM.
        b.set_l2_flush(128 << 20);
        let mut dev = Device::new(b.as_mut(), &manifest, &out);
        // 96 MiB: beyond any L2 of these GPUs (50 MB), and within Vulkan's usual 128 MiB storage-buffer range, so this is DRAM bandwidth (read + write).
        let words: Vec<u32> = (0..24u32 << 20).map(|i| i.wrapping_mul(2_654_435_761)).collect();
        let copy_ns = time(&mut dev, runs.min(20), |d| d.copy_words(&words).map(|_| ()))?;
        let copy_gbs = 2.0 * (words.len() * 4) as f64 / copy_ns;
        drop(words);
        println!("{}: copy bandwidth (copy_words, 96 MiB, read + write) {copy_gbs:.1} GB/s", info.backend);
        println!("| backend | kernel | L | bytes read | median µs | GB/s | of copy |");
        println!("|---|---|---|---|---|---|---|");
        let mut records = Vec::new();
        for l in [16384usize, 65536] {
            for p in paths {
                let bytes: Vec<u8> = (0..l * p.row_bytes()).map(|_| (r.below(256)) as u8).collect();
                let ns = time(&mut dev, runs, |d| p.run(d, &q, &sketch, &bytes))?;
                let gbs = bytes.len() as f64 / ns;
                println!("| {} | {} | {l} | {} | {:.1} | {gbs:.1} | {:.1} % |", info.backend, p.label(), bytes.len(), ns / 1e3, 100.0 * gbs / copy_gbs);
                records.push(serde_json::json!({"kernel": p.label(), "rows": l, "bytes_read": bytes.len(), "median_ns": ns, "gb_per_s": gbs, "fraction_of_copy": gbs / copy_gbs}));
            }
        }
        if let Some(dir) = &evidence {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let doc = serde_json::json!({
                "command": command_line(), "unix_time": unix_time(), "device": info, "runs": runs,
                "copy": {"kernel": "copy_words", "bytes": 96u64 << 20, "median_ns": copy_ns, "gb_per_s": copy_gbs}, "l2_flush_bytes": 128u64 << 20,
                "results": records,
            });
            let p = dir.join(format!("bench-kvquant-{}.json", info.backend));
            std::fs::write(&p, serde_json::to_string_pretty(&doc)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
            eprintln!("evidence written to {}", p.display());
        }
    }
    Ok(true)
}
