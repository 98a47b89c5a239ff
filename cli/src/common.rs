//! What the subcommands share: the catalogue, the manifest, the backends present, and
//! the command line recorded in evidence.

use anyhow::{bail, Context, Result};
use onekernel_cli::harness::{after_warmup, median, WARMUP};
use onekernel_codegen::manifest::Manifest;
use onekernel_codegen::CodegenError;
use onekernel_dsl::types::StorageType;
use onekernel_dsl::Kernel;
use onekernel_ops::attention::problem::TENSOR_CORE_MAX_CHUNK;
use onekernel_ops::{Device, Timing};
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::Prelude;
use onekernel_runtime::{Backend, BackendError};
use std::path::{Path, PathBuf};

/// The generated directory a subcommand uses without `--out`: `generated/` in the
/// working directory when it holds a manifest, else the repository's `generated/` this
/// binary was built from (so the command works from any directory of a checkout).
pub fn default_generated() -> PathBuf {
    let here = PathBuf::from("generated");
    if here.join("manifest.json").is_file() {
        return here;
    }
    let built = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated");
    if built.join("manifest.json").is_file() {
        return built.canonicalize().unwrap_or(built);
    }
    here
}

/// The catalogue kernels `names` select: a kernel's own name, or a family's — the name
/// of a function with a type axis selects each of its instances (`rms_norm` selects
/// `rms_norm_f32` and `rms_norm_f16`). An unknown name is an error listing the known ones.
pub fn kernel_names(names: &[String]) -> Result<Vec<String>> {
    let entries = onekernel_kernels::all();
    let mut out: Vec<String> = Vec::new();
    for n in names {
        let exact: Vec<&str> = entries.iter().filter(|e| e.name == n).map(|e| e.name).collect();
        let family: Vec<&str> = entries
            .iter()
            .filter(|e| e.name.strip_prefix(n.as_str()).and_then(|rest| rest.strip_prefix('_')).is_some_and(|ty| StorageType::parse(ty).is_some()))
            .map(|e| e.name)
            .collect();
        let chosen = if exact.is_empty() { family } else { exact };
        if chosen.is_empty() {
            return Err(CodegenError::UnknownKernel { name: n.clone(), known: entries.iter().map(|e| e.name.to_string()).collect() }.into());
        }
        for c in chosen {
            if !out.iter().any(|o| o == c) {
                out.push(c.to_string());
            }
        }
    }
    Ok(out)
}

/// The catalogue kernels `names` select ([`kernel_names`]; all when `names` is empty).
pub fn load_kernels(names: &[String]) -> Result<Vec<Kernel>> {
    let wanted = kernel_names(names)?;
    let mut out = Vec::new();
    for e in onekernel_kernels::all() {
        if wanted.is_empty() || wanted.iter().any(|n| n == e.name) {
            out.push(e.load()?);
        }
    }
    Ok(out)
}

/// `DIR/manifest.json`, refused where it is stale for this build: a catalogue kernel
/// whose source hash differs from the one the manifest was generated from (the kernel
/// was edited after `onekernel gen`), which would run old artifacts against the new
/// interpreter. Kernels of the manifest that this build does not have are not compared
/// (a downstream crate's generated directory).
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let m = read_any_manifest(dir)?;
    let mut stale = Vec::new();
    for e in onekernel_kernels::all() {
        let k = e.load()?;
        if let Some(km) = m.kernel(&k.name) {
            if km.source.hash != k.source.hash {
                stale.push(format!("`{}` (generated from source hash {}, this build's is {})", k.name, km.source.hash, k.source.hash));
            }
        }
    }
    if !stale.is_empty() {
        bail!(
            "{} is out of date: {} kernel(s) changed since it was generated: {}.\nRun `onekernel gen --out {}` (and commit the result), then run this command again.",
            dir.display(),
            stale.len(),
            stale.join(", "),
            dir.display()
        );
    }
    Ok(m)
}

/// `DIR/manifest.json`, checked for consistency and against its artifacts' hashes.
fn read_any_manifest(dir: &Path) -> Result<Manifest> {
    use onekernel_runtime::manifest::{load, ManifestLoadError};
    load(dir).map_err(|e| match e {
        ManifestLoadError::Read { .. } => anyhow::anyhow!("{e} (pass --out DIR, the directory `onekernel gen` wrote)"),
        e => e.into(),
    })
}

/// What `b`'s compilers reported that changes a kernel's speed and not its results (on
/// CUDA: ptxas serialized `wgmma` products or injected waits), one printable line each.
pub fn compiler_warning_lines(b: &dyn Backend) -> Vec<String> {
    b.compiler_warnings().into_iter().map(|w| format!("{:<8} compiler WARNING (speed, not results): {w}", b.name())).collect()
}

/// Says [`compiler_warning_lines`] of every backend on stderr: a benchmark's figures for
/// such a kernel are below what it can do.
pub fn report_compiler_warnings(backends: &[Box<dyn Backend>]) {
    for b in backends {
        for line in compiler_warning_lines(b.as_ref()) {
            eprintln!("{line}");
        }
    }
}

/// The command as typed, for evidence files.
pub fn command_line() -> String {
    std::iter::once("onekernel".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ")
}

/// Writes `doc` as pretty JSON to `dir/file` (creating `dir`) and says where on stderr.
pub fn write_evidence(dir: &Path, file: &str, doc: &serde_json::Value) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let p = dir.join(file);
    std::fs::write(&p, serde_json::to_string_pretty(doc)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
    eprintln!("evidence written to {}", p.display());
    Ok(())
}

/// The benchmarks' fast generator of cache images (xorshift64; not the validator's
/// SplitMix stream: images of hundreds of MB are drawn word by word).
pub struct Xorshift(u64);

impl Xorshift {
    /// A stream seeded from `r` (never zero).
    pub fn from(r: &mut onekernel_ops::attention::batch::SeqRng) -> Self {
        Xorshift(r.below(u32::MAX) as u64 | 1)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// `bytes` bytes of f16 values with |x| in [1/8, 2), signs random (exponent bits
    /// 0b011xx): finite, normal, no overflow in any sum the benchmarks take.
    pub fn f16_image(&mut self, bytes: usize) -> Vec<u8> {
        (0..bytes / 2).flat_map(|_| (((self.next_u64() >> 16) as u16 & 0x8fff) | 0x3000).to_le_bytes()).collect()
    }
}

/// Pages `0 … n − 1` in a random order (a paged cache's physical pages).
pub fn shuffled_pages(n: usize, r: &mut onekernel_ops::attention::batch::SeqRng) -> Vec<i32> {
    let mut phys: Vec<i32> = (0..n as i32).collect();
    for i in (1..n).rev() {
        phys.swap(i, r.below(i as u32 + 1) as usize);
    }
    phys
}

/// The driver copies of a run as evidence: backend, API, bytes and GB/s each.
pub fn driver_copies_json(backends: &[Box<dyn Backend>], gbs: &[f64], bytes: u64) -> Vec<serde_json::Value> {
    backends
        .iter()
        .zip(gbs)
        .map(|(b, g)| serde_json::json!({"backend": b.name(), "api": onekernel_cli::harness::driver_copy_api(b.name()), "bytes": bytes, "gb_per_s": g}))
        .collect()
}

/// Seconds since the Unix epoch, for evidence files.
pub fn unix_time() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Opens the backends of a comma list for the commands that also run the interpreter
/// (`all` = cpu, vulkan, cuda, none of them asked for by name); see [`open_backends`].
pub fn open_list(list: &str, explicit: bool) -> Result<Vec<Box<dyn Backend>>> {
    let (list, explicit) = if list == "all" { ("cpu,vulkan,cuda", false) } else { (list, explicit) };
    open_backends(list, explicit)
}

/// Opens the backends of a comma list (`all`: vulkan and cuda, the devices checked
/// against the interpreter), each named once, in order. A backend that is absent is an
/// error where the user named it (`explicit`: the command line gave `--backend`), and a
/// visible `skipped` line where it comes from `all` or from the command's default.
pub fn open_backends(which: &str, explicit: bool) -> Result<Vec<Box<dyn Backend>>> {
    let mut names: Vec<(&str, bool)> = Vec::new();
    for item in which.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (these, named): (&[&str], bool) = match item {
            "all" => (&["vulkan", "cuda"], false),
            "cpu" => (&["cpu"], explicit),
            "vulkan" => (&["vulkan"], explicit),
            "cuda" => (&["cuda"], explicit),
            "msl-emu" => (&["msl-emu"], explicit),
            other => bail!("unknown backend `{other}`; use cpu, vulkan, cuda, msl-emu or all, or a comma list of them"),
        };
        for n in these {
            match names.iter_mut().find(|(m, _)| m == n) {
                Some(entry) => entry.1 |= named,
                None => names.push((n, named)),
            }
        }
    }
    let mut out: Vec<Box<dyn Backend>> = Vec::new();
    for (n, named) in names {
        let opened: Result<Box<dyn Backend>, BackendError> = match n {
            "cpu" => Ok(Box::new(CpuBackend::new(load_kernels(&[])?))),
            "vulkan" => Vulkan::new().map(|v| Box::new(v) as Box<dyn Backend>),
            "msl-emu" => onekernel_runtime::msl_emu::MslEmu::new().map(|v| Box::new(v) as Box<dyn Backend>),
            _ => onekernel_runtime::cuda::Cuda::new().map(|v| Box::new(v) as Box<dyn Backend>),
        };
        match opened {
            Ok(b) => {
                let i = b.info();
                eprintln!(
                    "{n}: {} ({}), subgroup {:?}, fma {}, f16 widening {}, async copies {}, validation {}",
                    i.device,
                    i.driver,
                    i.subgroup_size,
                    i.fma,
                    i.f16_widening,
                    if i.async_copies { "cp.async" } else { "synchronous" },
                    i.validation
                );
                out.push(b);
            }
            Err(e) if named => bail!("backend `{n}` was asked for and is not available: {e} (`--backend all` skips what is absent)"),
            Err(e) => eprintln!("{n}: skipped — {e}"),
        }
    }
    Ok(out)
}

/// The options both benchmark programs take: `--backend LIST`, `--runs N` (≥ 1),
/// `--out DIR`, `--evidence DIR`, and `--quick` where the program has a smoke-test mode.
pub struct BenchOptions {
    /// Comma list of backends.
    pub backends: String,
    /// Whether `--backend` was given (a backend named and absent is then an error).
    pub backends_named: bool,
    /// Timed dispatches per measurement.
    pub runs: u32,
    /// The generated directory.
    pub out: PathBuf,
    /// Where evidence JSON goes, if anywhere.
    pub evidence: Option<PathBuf>,
    /// `--quick` was given.
    pub quick: bool,
    /// `--smoke` (bench-kvquant, bench-linear, bench-formats, bench-prefill): every launch path at one small shape
    /// with small copies and a small flush, one pass — a check of the program (e.g. under
    /// compute-sanitizer), not a measurement.
    pub smoke: bool,
    /// `--shape BxL` (repeatable): measure only these (batch, length) shapes.
    pub shapes: Vec<(u32, u32)>,
    /// `--fast-chunk N`: the fast mode's chunk length instead of the scheduler's choice.
    pub fast_chunk: Option<u32>,
    /// `--tc-chunk N`: the tensor-core modes' chunk length instead of the scheduler's
    /// choice (`tensor_core_chunk`).
    pub tc_chunk: Option<u32>,
    /// `--det-chunks N` (1 or 2): deterministic chunks per workgroup instead of the
    /// runtime's choice.
    pub det_chunks: Option<u32>,
    /// `--det-long-after N`: the longest sequence the deterministic mode cuts into
    /// 128-token chunks instead of the runtime's `DETERMINISTIC_LONG_AFTER` (other bits
    /// for sequences between the two; for measuring where the threshold should be).
    pub det_long_after: Option<u32>,
    /// `--tensor-cores 1|2|3|det,…`: also time the paged step on tensor cores
    /// (`attn_decode_chunk_mma`, class `fast`) in these modes, where the backend runs it.
    pub tensor_cores: Vec<TensorCoreMode>,
    /// `--tensor-cores-only`: time only the `--tensor-cores` modes (no exact modes, no
    /// contiguous cache), for quick comparisons of tensor-core kernels at large shapes.
    pub tensor_cores_only: bool,
    /// `--merge` / `--no-merge`: tensor-core steps of several chunks per sequence merge
    /// in the chunk kernel, or launch the combine, on every backend (`None`: the
    /// runtime's choice per backend, `merges_in_chunk_kernel`).
    pub merge: Option<bool>,
}

impl BenchOptions {
    /// The options of the decode-attention benchmark alone (`--shape`, `--fast-chunk`, `--tc-chunk`,
    /// `--det-chunks`, `--det-long-after`, `--tensor-cores`): an error naming them for the
    /// other benchmark programs.
    pub fn reject_attention_options(&self) -> Result<()> {
        if self.fast_chunk.is_some()
            || self.tc_chunk.is_some()
            || self.det_chunks.is_some()
            || self.det_long_after.is_some()
            || !self.tensor_cores.is_empty()
            || self.tensor_cores_only
            || self.merge.is_some()
            || !self.shapes.is_empty()
        {
            bail!("--shape, --fast-chunk, --tc-chunk, --det-chunks, --det-long-after, --tensor-cores, --tensor-cores-only, --merge and --no-merge are options of `onekernel bench` (decode attention)");
        }
        Ok(())
    }
}

/// Each backend's driver copy of `bytes` (read + write, GB/s; NaN where it has none),
/// said on stderr, and the fastest of them: the device's copy bandwidth, which every
/// backend's fractions use (NVIDIA's `vkCmdCopyBuffer` reaches a fifth of CUDA's).
pub fn driver_copies(backends: &mut [Box<dyn Backend>], bytes: u64, flush: &Prelude) -> Result<(Vec<f64>, f64)> {
    let mut gbs = Vec::with_capacity(backends.len());
    for b in backends.iter_mut() {
        let g = onekernel_cli::harness::driver_copy_gbs(b.as_mut(), bytes, Some(flush))?.unwrap_or(f64::NAN);
        eprintln!("{}: driver copy ({} MiB, read + write) {g:.1} GB/s", b.name(), bytes >> 20);
        gbs.push(g);
    }
    let device = gbs.iter().copied().filter(|g| g.is_finite()).fold(f64::NAN, f64::max);
    Ok((gbs, device))
}

/// A tensor-core step `onekernel bench --tensor-cores` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorCoreMode {
    /// The scheduler's chunks with 1, 2 or 3 pipeline stages (`1`, `2`, `3`; the
    /// deepest the device holds up to that).
    Stages(u32),
    /// The fixed chunks of `Split::tensor_cores_deterministic` (`det`).
    Deterministic,
}

impl TensorCoreMode {
    /// The mode's name in the evidence JSON.
    pub fn label(self) -> &'static str {
        match self {
            TensorCoreMode::Stages(1) => "tensor_cores_1stage",
            TensorCoreMode::Stages(2) => "tensor_cores_2stage",
            TensorCoreMode::Stages(_) => "tensor_cores_3stage",
            TensorCoreMode::Deterministic => "tensor_cores_det",
        }
    }
}

/// The most tokens (batch × length) a `--shape` may ask for: four times the largest
/// anchor shape (128 × 8192), 16 GiB of f16 K and V at Hkv 8, D 128.
pub const MAX_SHAPE_TOKENS: u64 = 1 << 22;

/// The most timed runs `--runs` may ask for (each run's time is kept).
pub const MAX_RUNS: u32 = 100_000;

impl BenchOptions {
    /// Parses `args`; `quick_allowed` says whether `--quick` exists for this program.
    pub fn parse(cmd: &str, args: &[String], quick_allowed: bool) -> Result<Self> {
        use crate::flags::{list, one, switch};
        let mut allowed = vec![list("backend"), one("runs"), one("out"), one("evidence")];
        if quick_allowed {
            allowed.extend([
                switch("quick"),
                switch("smoke"),
                list("tensor-cores"),
                switch("tensor-cores-only"),
                switch("merge"),
                switch("no-merge"),
                list("shape"),
                one("fast-chunk"),
                one("tc-chunk"),
                one("det-chunks"),
                one("det-long-after"),
            ]);
        }
        let p = crate::flags::parse(cmd, args, &allowed, false)?;
        let backends = p.list("backend");
        let mut o = BenchOptions {
            backends: if backends.is_empty() { "cuda,vulkan".into() } else { backends.join(",") },
            backends_named: p.has("backend"),
            runs: p.parsed("runs", "a number", |v| v.parse().ok())?.unwrap_or(50),
            out: p.one("out").map(PathBuf::from).unwrap_or_else(crate::common::default_generated),
            evidence: p.one("evidence").map(PathBuf::from),
            quick: p.has("quick"),
            smoke: p.has("smoke"),
            shapes: Vec::new(),
            fast_chunk: None,
            tc_chunk: None,
            det_chunks: None,
            det_long_after: None,
            tensor_cores: Vec::new(),
            tensor_cores_only: p.has("tensor-cores-only"),
            merge: match (p.has("merge"), p.has("no-merge")) {
                (true, true) => bail!("--merge and --no-merge exclude each other"),
                (true, false) => Some(true),
                (false, true) => Some(false),
                (false, false) => None,
            },
        };
        let modes = p.list("tensor-cores");
        for s in &modes {
            match s.parse::<u32>() {
                Ok(n @ 1..=3) => o.tensor_cores.push(TensorCoreMode::Stages(n)),
                _ if s == "det" => o.tensor_cores.push(TensorCoreMode::Deterministic),
                _ => bail!("--tensor-cores takes 1, 2, 3 (pipeline stages) or det (fixed chunks), comma-separated (got `{}`)", modes.join(",")),
            }
        }
        for v in p.list("shape") {
            let parsed = v.split_once('x').and_then(|(b, l)| Some((b.parse::<u32>().ok()?, l.parse::<u32>().ok()?)));
            match parsed {
                Some((b, l)) if b > 0 && l > 0 && (b as u64) * (l as u64) <= MAX_SHAPE_TOKENS => o.shapes.push((b, l)),
                Some((b, l)) if b > 0 && l > 0 => {
                    bail!("--shape {v}: {} tokens in all, more than the {MAX_SHAPE_TOKENS} a benchmark cache is built for", b as u64 * l as u64)
                }
                _ => bail!("--shape takes BATCHxLENGTH, e.g. 16x32768 (got `{v}`)"),
            }
        }
        o.fast_chunk =
            p.parsed("fast-chunk", "a chunk length of 1 … 512 tokens (more than 256 needs a backend with asynchronous copies)", |v| {
                v.parse::<u32>().ok().filter(|n| (1..=512).contains(n))
            })?;
        o.tc_chunk = p.parsed("tc-chunk", &format!("a chunk length of 1 … {TENSOR_CORE_MAX_CHUNK} tokens"), |v| {
            v.parse::<u32>().ok().filter(|n| (1..=TENSOR_CORE_MAX_CHUNK).contains(n))
        })?;
        o.det_chunks =
            p.parsed("det-chunks", "1 or 2 deterministic chunks per workgroup", |v| v.parse::<u32>().ok().filter(|n| (1..=2).contains(n)))?;
        o.det_long_after = p.parsed("det-long-after", "a sequence length of at least 1 token", |v| v.parse::<u32>().ok().filter(|&n| n > 0))?;
        if o.runs == 0 || o.runs > MAX_RUNS {
            bail!("--runs takes 1 … {MAX_RUNS} timed runs (got {})", o.runs);
        }
        Ok(o)
    }
}

/// Device times in ns of one measurement: median, fastest and slowest run.
pub struct Times {
    /// Median of the runs after the warm-ups.
    pub median: f64,
    /// Fastest run.
    pub min: f64,
    /// Slowest run.
    pub max: f64,
}

/// Runs `f`'s launches `runs` + [`WARMUP`] times on inputs uploaded once, each run after
/// `flush`, as `layers` layers back to back (each over its own copy of the inputs); the
/// device times of the last `runs`, per unit.
pub fn time_layers<'a, E: std::error::Error + Send + Sync + 'static>(
    dev: &mut Device<'a>,
    runs: usize,
    layers: u32,
    flush: &'a Prelude<'a>,
    f: impl FnOnce(&mut Device) -> std::result::Result<(), E>,
) -> Result<Times> {
    dev.set_timing(Some(Timing { runs: (runs + WARMUP) as u32, layers, apart: false, prelude: Some(flush) }));
    let ran = f(dev);
    dev.set_timing(None);
    ran?;
    let ns: Vec<f64> = dev.last_times().first().map(|t| after_warmup(t).iter().copied().filter(|t| t.is_finite()).collect()).unwrap_or_default();
    if ns.is_empty() {
        bail!("{} does not measure device time", dev.backend().name());
    }
    Ok(Times { median: median(&ns), min: ns.iter().copied().fold(f64::INFINITY, f64::min), max: ns.iter().copied().fold(0.0, f64::max) })
}
