//! `onekernel`: regenerate, check and list the kernel catalogue.
//!
//! ```text
//! onekernel gen   [--out DIR] [--kernel NAME]… [--threads N]
//! onekernel check [--out DIR] [--threads N]
//! onekernel list  [--kernel NAME]…
//! onekernel validate [--backend cpu|vulkan|cuda|msl-emu|all] [--kernel NAME]… [--variant LABEL]
//!                    [--cases N] [--variants N] [--seed N] [--evidence DIR] [--out DIR]
//! onekernel fixture FILE.json… [--backend cpu,vulkan,cuda|all] [--out DIR] [--evidence DIR] [--prefill-fast]
//! onekernel attention-grid [--backend cpu,vulkan,cuda|all] [--grid full|ci] [--first N]
//!                          [--out DIR] [--evidence DIR]
//! onekernel bench-kvquant [--backend vulkan,cuda] [--runs N] [--quick] [--out DIR] [--evidence DIR]
//! onekernel bench-linear [--backend vulkan,cuda] [--runs N] [--quick] [--out DIR] [--evidence DIR]
//! onekernel bench-formats [--backend vulkan,cuda] [--runs N] [--quick|--smoke] [--out DIR] [--evidence DIR]
//! onekernel bench-tiles [--backend vulkan,cuda] [--runs N] [--evidence DIR]
//! onekernel bench-prefill [--backend vulkan,cuda] [--runs N] [--quick|--smoke] [--out DIR] [--evidence DIR]
//! onekernel bench [--backend cuda,vulkan] [--runs N] [--quick] [--shape BxL]... [--fast-chunk N] [--tc-chunk N] [--det-chunks 1|2] [--det-long-after N] [--tensor-cores 1|2|3|det,…] [--out DIR] [--evidence DIR]
//! onekernel vk-stats [--kernel NAME]... [--out DIR] [--evidence DIR]
//! ```

mod bench;
mod bench_formats;
mod bench_kvquant;
mod bench_linear;
mod bench_prefill;
mod bench_tiles;
mod common;
mod fixture;
mod flags;
mod grid;
mod vk_stats;

use anyhow::{anyhow, bail, Context, Result};
use common::{command_line, compiler_warning_lines, load_kernels, open_backends, read_manifest};
use onekernel_codegen::manifest::Manifest;
use onekernel_codegen::output::Difference;
use onekernel_codegen::Builder;
use onekernel_dsl::ir::ParamKind;
use onekernel_dsl::Kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, Evidence, ValidateOptions};
use onekernel_runtime::BackendError;
use std::path::PathBuf;
use std::time::Instant;

struct Options {
    out: PathBuf,
    kernels: Vec<String>,
    threads: Option<usize>,
    backend: String,
    /// Whether `--backend` was given (a backend named and absent is then an error).
    backend_named: bool,
    variant: Option<String>,
    /// `validate --cases N`: only the first N validation cases of each kernel.
    cases: Option<usize>,
    /// `validate --variants N`: only the first N variants of each kernel that the device
    /// runs (variants it reports as unsupported do not count).
    variants: Option<usize>,
    seed: u64,
    evidence: Option<PathBuf>,
}

pub(crate) const USAGE: &str =
    "usage: onekernel <gen|check|list|validate|fixture|attention-grid|bench|bench-kvquant|bench-linear|bench-formats|bench-prefill|bench-tiles|vk-stats> [--out DIR] [--kernel NAME]... [--threads N]
                 [--backend cpu|vulkan|cuda|msl-emu|all] [--variant LABEL] [--cases N] [--variants N] [--seed N]
                 [--evidence DIR]

  gen    regenerate CUDA, GLSL, SPIR-V and MSL for every kernel (or the named ones)
         into DIR, with the manifest

  Without --out, DIR is ./generated when it holds a manifest, else the generated/ of the
  checkout this binary was built from. --backend takes cpu, vulkan, cuda, msl-emu (the
  generated MSL run on the CPU), all (every GPU backend present) or a comma list.

  check  regenerate in memory and compare with DIR; exit 1 and list what differs
  list   kernels, their variants and backends
  attention-grid  run decode attention's determinism grid (full: 216 points,
         ci: the CI subset) on the backends; exit 1 unless every point is batch-invariant
         and repeatable and the fast-mode control changes bits
  bench  decode attention over the anchor shapes (Hq 32, Hkv 8, D 128, f16; B × L from 1 × 4096
         to 128 × 8192; paged/contiguous, fast/deterministic),
         timed as decode steps (chunk + combine back to back) and as the two kernels
         apart, with the copy bandwidth of the same run; markdown tables + JSON (GPU machine;
         --shape BxL, repeatable: only those shapes; --fast-chunk N: the fast mode's
         chunk length instead of the scheduler's choice; --tc-chunk N: the tensor-core
         modes' (1 … 65536); --det-chunks 1|2: the
         deterministic mode's chunks per workgroup instead of the runtime's — 128-token
         chunks, and 256-token ones where every sequence is long and K is staged;
         --det-long-after N: 256-token deterministic chunks past N tokens instead of 2048;
         --tensor-cores 1|2|3|det,…: also the paged step on tensor cores, class fast: the
         scheduler's chunks with 1, 2 or 3 pipeline stages, or fixed chunks (det);
         --tensor-cores-only: those modes alone, no exact modes or contiguous cache;
         --merge / --no-merge: tensor-core steps of several chunks per sequence merge in
         the chunk kernel / launch the combine on every backend, not as the runtime
         chooses per backend)
  bench-kvquant  effective bandwidth of the KV-quant score kernels (8 KV heads of
         L = 16384 and 65536 rows, 8 or 32 query heads) against the copy bandwidth
         measured in the same run and a bare read of the same bytes (the bound on any
         kernel), each as one dispatch and per layer of 32 launched back to back, and the
         launch floor (GPU machine; --quick: TBQ4, QJL, Polar at 65536; --smoke: every
         path at L = 300 with small copies, a check of the program, not a measurement)
  bench-linear  the gated delta net's decode step (S 128, H 32, Hk 16 and 32, B 1, 16,
         64) with the fused state gather and write-back, one dispatch and per layer of 16,
         against the driver copy of the same run (GPU machine; --quick: B 16; --smoke:
         B 2 with small copies, a check of the program, not a measurement)
  bench-formats  FP8 and mixed-row decode attention (Hq 128, Hkv 1, D 512, B 1 and 16,
         L 2048 and 32768, fast and deterministic) and NVFP4 GEMV (4096 × 4096,
         14336 × 4096, 4096 × 14336; f32, bf16, NVFP4 activations) against the driver copy
         of the same run (GPU machine; --quick or --smoke: one small shape of each, a check
         of the program, not a measurement)
  bench-prefill  causal prefill in its exact mode (every query's decode-step bits; Hq 32,
         Hkv 8, D 128, f16, paged; 1 × 4096, 4 × 2048, 16 × 512, a varlen mix) in TFLOP/s
         (GPU machine; --quick or --smoke: one small step, a check of the program)
  bench-tiles  what each register-tile operation costs: `tile_probe` (528 workgroups of
         four groups of 32) running 4096 iterations of a pattern — operand loads in each
         layout with a product, the product alone, accumulators through shared memory,
         loads from a buffer — median device time per backend (GPU machine)
  vk-stats  the Vulkan driver compiler's report (registers, shared memory, … as the
         driver names them) per kernel × variant (VK_KHR_pipeline_executable_properties)
  fixture   run external fixture files (decode-attention, linear-attention or elizaOS KV-quant schema) on the backends (comma list)
         and compare with their float64 reference within the file's tolerance;
         --prefill-fast: prefill files in the fast mode on tensor cores (`attn_prefill_mma`;
         SKIPPED where the device has no register tiles)
  validate  run every kernel, variant and validation case on the backends (all: every
         GPU backend present) against the reference interpreter, bitwise for exact kernels;
         --cases N: only each kernel's first N cases; --variants N: only the first N
         variants of each kernel that the device runs (one it cannot run is reported
         SKIPPED and not counted); write evidence JSON to DIR with --evidence; exit 1 on
         any mismatch";

/// The options of `gen`, `check`, `list` and `validate` (each takes its own subset).
fn parse(cmd: &str, args: &[String]) -> Result<Options> {
    use flags::{list, one};
    let allowed: &[flags::Flag] = match cmd {
        "gen" => &[one("out"), list("kernel"), one("threads")],
        "check" => &[one("out"), one("threads")],
        "list" => &[one("out"), list("kernel")],
        _ => &[one("out"), list("kernel"), list("backend"), one("variant"), one("cases"), one("variants"), one("seed"), one("evidence")],
    };
    let p = flags::parse(cmd, args, allowed, false)?;
    let backends = p.list("backend");
    Ok(Options {
        out: p.one("out").map(PathBuf::from).unwrap_or_else(crate::common::default_generated),
        kernels: p.list("kernel"),
        threads: p.parsed("threads", "a number of threads", |v| v.parse().ok())?,
        backend: if backends.is_empty() { "all".into() } else { backends.join(",") },
        backend_named: p.has("backend"),
        variant: p.one("variant").map(String::from),
        cases: p.parsed("cases", "a number of cases ≥ 1", |v| v.parse().ok().filter(|&n: &usize| n >= 1))?,
        variants: p.parsed("variants", "a number of variants ≥ 1", |v| v.parse().ok().filter(|&n: &usize| n >= 1))?,
        seed: p.parsed("seed", "a number", |v| v.parse().ok())?.unwrap_or(1),
        evidence: p.one("evidence").map(PathBuf::from),
    })
}

fn builder(kernels: Vec<Kernel>, o: &Options) -> Builder {
    let b = Builder::new().kernels(kernels).out_dir(&o.out);
    match o.threads {
        Some(n) => b.threads(n),
        None => b,
    }
}

fn progress(n: usize, total: usize, t: &onekernel_codegen::generate::KernelTiming) {
    eprintln!("[{n}/{total}] {:<28} cuda, glsl, spir-v (validated), msl  {:>7.1} ms", t.name, t.elapsed.as_secs_f64() * 1e3);
}

/// One line on naga's verdicts, then one per kernel naga cannot read in part, with naga's
/// reasons.
fn print_naga(g: &onekernel_codegen::Generated) {
    let valid: usize = g.naga.values().map(|r| r.valid).sum();
    let skipped: usize = g.naga.values().map(|r| r.not_checkable.len()).sum();
    eprintln!("naga: {valid} specialized module(s) parsed and valid, {skipped} not checkable by naga's SPIR-V reader");
    for (name, r) in g.naga.iter().filter(|(_, r)| !r.not_checkable.is_empty()) {
        eprintln!("  {name}: {} of {} not checkable — {}", r.not_checkable.len(), r.valid + r.not_checkable.len(), r.reasons().join(", "));
    }
}

fn gen(o: &Options) -> Result<()> {
    let start = Instant::now();
    let kernels = load_kernels(&o.kernels)?;
    let n = kernels.len();
    let g = builder(kernels, o).generate_with_progress(&progress)?;
    print_naga(&g);
    let changes = if o.kernels.is_empty() { g.write_to(&o.out)? } else { write_partial(&g, o)? };
    let count = |f: fn(&Difference) -> bool| changes.iter().filter(|c| f(c)).count();
    let changed = count(|c| matches!(c, Difference::Missing(_) | Difference::Changed(_)));
    let removed = count(|c| matches!(c, Difference::Extra(_)));
    for c in changes.iter().filter(|c| matches!(c, Difference::Foreign(_))) {
        eprintln!("  {c}");
    }
    eprintln!(
        "generated {n} kernel(s): {} files in {} in {:.2} s ({changed} written, {removed} stale removed)",
        g.files.len(),
        o.out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `gen --kernel …`: writes the named kernels' files and merges their manifest entries
/// into the existing manifest, leaving every other kernel as it is.
fn write_partial(g: &onekernel_codegen::Generated, o: &Options) -> Result<Vec<Difference>> {
    let path = o.out.join("manifest.json");
    let fresh: Manifest = serde_json::from_slice(g.files.get("manifest.json").map(|v| v.as_slice()).unwrap_or(b"{}"))?;
    let mut merged: Manifest = match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| format!("cannot parse {}; run a full `onekernel gen`", path.display()))?,
        Err(_) => Manifest { kernels: vec![], ..fresh.clone() },
    };
    for k in fresh.kernels {
        merged.kernels.retain(|m| m.name != k.name);
        merged.kernels.push(k);
    }
    merged.kernels.sort_by(|a, b| a.name.cmp(&b.name));
    merged.generator = fresh.generator;
    let mut partial = g.clone();
    let mut json = serde_json::to_string_pretty(&merged)?;
    json.push('\n');
    partial.files.insert("manifest.json".into(), json.into_bytes());
    let diffs: Vec<Difference> =
        partial.compare_with(&o.out)?.into_iter().filter(|d| matches!(d, Difference::Missing(_) | Difference::Changed(_))).collect();
    for (rel, bytes) in &partial.files {
        let p = o.out.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        if std::fs::read(&p).ok().as_deref() != Some(bytes.as_slice()) {
            std::fs::write(&p, bytes).with_context(|| format!("cannot write {}", p.display()))?;
        }
    }
    Ok(diffs)
}

fn check(o: &Options) -> Result<bool> {
    let start = Instant::now();
    if !o.kernels.is_empty() {
        bail!("`check` compares the whole catalogue; it takes no --kernel");
    }
    let g = builder(load_kernels(&[])?, o).generate()?;
    print_naga(&g);
    let diffs = g.compare_with(&o.out)?;
    if diffs.is_empty() {
        eprintln!("{} is up to date ({} files, checked in {:.2} s)", o.out.display(), g.files.len(), start.elapsed().as_secs_f64());
        return Ok(true);
    }
    eprintln!("{} differs from a fresh generation:", o.out.display());
    for d in &diffs {
        eprintln!("  {d}");
    }
    eprintln!("run `onekernel gen` and commit the result");
    Ok(false)
}

fn list(o: &Options) -> Result<()> {
    // The kernels listed are this build's; where a generated directory is at hand it must
    // be current, as for every command that runs its artifacts.
    if o.out.join("manifest.json").is_file() {
        read_manifest(&o.out)?;
    }
    for k in load_kernels(&o.kernels)? {
        let variants = onekernel_codegen::KernelInfo::of(&k).instances;
        println!("{}  [{}]  workgroup {:?}  {:?}", k.name, k.source.file, k.workgroup, k.class);
        for p in &k.params {
            let what = match &p.kind {
                ParamKind::Buffer { elem, access, .. } => {
                    format!("buffer &{}[{elem}]", if *access == onekernel_dsl::ir::Access::ReadWrite { "mut " } else { "" })
                }
                ParamKind::Push { ty } => format!("push {ty}"),
                ParamKind::Spec { ty, default, values } => match values {
                    Some(v) => format!("variant axis {ty} {:?}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>()),
                    None => format!("spec {ty} = {}", default.map(|d| d.to_string()).unwrap_or_default()),
                },
            };
            println!("    {:<12} {what}", p.name);
        }
        if variants.len() > 1 {
            for v in &variants {
                println!("    variant {:<30} cuda entry {}", v.label, v.entry);
            }
        }
        println!("    backends: cuda/{0}.cu  vulkan/{0}.comp + .spv  metal/{0}.metal", k.name);
    }
    Ok(())
}

fn validate_cmd(o: &Options) -> Result<bool> {
    let path = o.out.join("manifest.json");
    let manifest = read_manifest(&o.out)?;
    let kernels = load_kernels(&o.kernels)?;
    let mut reference = CpuBackend::new(kernels.clone());
    let mut all_passed = true;
    let mut skipped = 0usize;
    let command = command_line();
    for mut backend in open_backends(&o.backend, o.backend_named)? {
        let mut verdicts = Vec::new();
        for k in &kernels {
            let km = manifest.kernel(&k.name).ok_or_else(|| anyhow!("kernel `{}` is not in {}; run `onekernel gen`", k.name, path.display()))?;
            let cases = onekernel_kernels::cases::validation_cases(&k.name).ok_or_else(|| anyhow!("kernel `{}` has no validation cases", k.name))?;
            let variants: Vec<_> = km.variants.iter().filter(|v| o.variant.as_deref().is_none_or(|want| v.label == want)).collect();
            if variants.is_empty() {
                bail!(
                    "kernel `{}` has no variant `{}`; variants: {}",
                    k.name,
                    o.variant.as_deref().unwrap_or(""),
                    km.variants.iter().map(|v| v.label.as_str()).collect::<Vec<_>>().join("; ")
                );
            }
            let mut variants_run = 0usize;
            for v in variants {
                if variants_run == o.variants.unwrap_or(usize::MAX) {
                    break;
                }
                let mut ran = false;
                for (i, case) in cases.iter().enumerate().take(o.cases.unwrap_or(usize::MAX)) {
                    let seed = o.seed.wrapping_mul(1000).wrapping_add(i as u64);
                    let verdict = match validate(backend.as_mut(), &mut reference, km, &o.out, v, case, seed, ValidateOptions::default()) {
                        // A variant the device cannot run is reported and left out, not
                        // counted as passed (e.g. lavapipe's 32 KiB of shared memory).
                        Err(BackendError::Unsupported { reason, .. }) => {
                            println!("{:<8} {:<24} {:<22} {:<28} SKIPPED  {reason}", backend.name(), k.name, v.label, case.label);
                            skipped += 1;
                            continue;
                        }
                        r => r.with_context(|| format!("kernel `{}` variant `{}` case `{}` on {}", k.name, v.label, case.label, backend.name()))?,
                    };
                    ran = true;
                    if let Some(fault) = &verdict.reference_fault {
                        println!("{:<8} {:<24} {:<22} {:<28} FAULT    {fault}", backend.name(), k.name, v.label, case.label);
                        all_passed = false;
                        verdicts.push(verdict);
                        continue;
                    }
                    let status = if verdict.passed { "ok" } else { "MISMATCH" };
                    let time = verdict.device_ns.map(|ns| format!("{:.1} us", ns / 1e3)).unwrap_or_default();
                    println!(
                        "{:<8} {:<24} {:<22} {:<28} {status:<8} max_ulp {:<6} {time}",
                        backend.name(),
                        k.name,
                        v.label,
                        case.label,
                        verdict.max_ulp
                    );
                    if !verdict.passed {
                        all_passed = false;
                        println!("         first mismatch: {}", verdict.first_mismatch.clone().unwrap_or_default());
                    }
                    verdicts.push(verdict);
                }
                variants_run += usize::from(ran);
            }
        }
        // Speed, not results: the verdicts stand.
        for line in compiler_warning_lines(backend.as_ref()) {
            println!("{line}");
        }
        if let Some(dir) = &o.evidence {
            let ev = Evidence {
                device: backend.info().clone(),
                command: command.clone(),
                unix_time: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
                result: if verdicts.iter().all(|v| v.passed) { "passed".into() } else { "failed".into() },
                verdicts,
            };
            let p = ev.write(dir).with_context(|| format!("cannot write evidence to {}", dir.display()))?;
            eprintln!("{}: evidence written to {}", backend.name(), p.display());
        }
    }
    if skipped > 0 {
        eprintln!("{skipped} verdict(s) skipped: variants this device cannot run (see SKIPPED lines)");
    }
    Ok(all_passed)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(|s| s.as_str()) {
        Some("gen") => parse("gen", &args[1..]).and_then(|o| gen(&o)).map(|_| true),
        Some("check") => parse("check", &args[1..]).and_then(|o| check(&o)),
        Some("list") => parse("list", &args[1..]).and_then(|o| list(&o)).map(|_| true),
        Some("validate") => parse("validate", &args[1..]).and_then(|o| validate_cmd(&o)),
        Some("fixture") => fixture::fixture_cmd(&args[1..]),
        Some("attention-grid") => grid::grid_cmd(&args[1..]),
        Some("bench") => bench::bench_cmd(&args[1..]),
        Some("bench-kvquant") => bench_kvquant::bench_kvquant_cmd(&args[1..]),
        Some("bench-linear") => bench_linear::bench_linear_cmd(&args[1..]),
        Some("bench-formats") => bench_formats::bench_formats_cmd(&args[1..]),
        Some("bench-prefill") => bench_prefill::bench_prefill_cmd(&args[1..]),
        Some("bench-tiles") => bench_tiles::bench_tiles_cmd(&args[1..]),
        Some("vk-stats") => vk_stats::vk_stats_cmd(&args[1..]),
        Some("-h" | "--help" | "help") => {
            println!("{USAGE}");
            Ok(true)
        }
        _ => Err(anyhow!("{USAGE}")),
    };
    match result {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}
