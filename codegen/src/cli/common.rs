//! What the subcommands share: the catalogue, the manifest, the backends present, and
//! the command line recorded in evidence.

use anyhow::{bail, Context, Result};
use onekernel_codegen::manifest::Manifest;
use onekernel_codegen::CodegenError;
use onekernel_dsl::Kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::{Backend, BackendError};
use std::path::{Path, PathBuf};

/// The named catalogue kernels (all when `names` is empty).
pub fn load_kernels(names: &[String]) -> Result<Vec<Kernel>> {
    let entries = onekernel_kernels::all();
    let mut out = Vec::new();
    for n in names {
        if !entries.iter().any(|e| e.name == n) {
            return Err(CodegenError::UnknownKernel { name: n.clone(), known: entries.iter().map(|e| e.name.to_string()).collect() }.into());
        }
    }
    for e in entries {
        if names.is_empty() || names.iter().any(|n| n == e.name) {
            out.push(e.load()?);
        }
    }
    Ok(out)
}

/// `DIR/manifest.json`.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join("manifest.json");
    serde_json::from_slice(&std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?).with_context(|| format!("cannot parse {}", path.display()))
}

/// The command as typed, for evidence files.
pub fn command_line() -> String {
    std::iter::once("onekernel".to_string()).chain(std::env::args().skip(1)).collect::<Vec<_>>().join(" ")
}

/// Seconds since the Unix epoch, for evidence files.
pub fn unix_time() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Opens the backends of a comma list (`all` = cpu, vulkan, cuda); one that is absent is
/// reported and skipped.
pub fn open_list(list: &str) -> Result<Vec<Box<dyn Backend>>> {
    let list = if list == "all" { "cpu,vulkan,cuda" } else { list };
    let mut opened = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        opened.extend(open_backends(name)?);
    }
    Ok(opened)
}

/// Opens one backend (`all`: vulkan and cuda, the devices checked against the interpreter).
pub fn open_backends(which: &str) -> Result<Vec<Box<dyn Backend>>> {
    let names: Vec<&str> = match which {
        "all" => vec!["vulkan", "cuda"],
        "" => vec![],
        "cpu" | "vulkan" | "cuda" => vec![which],
        other => bail!("unknown backend `{other}`; use cpu, vulkan, cuda or all"),
    };
    let mut out: Vec<Box<dyn Backend>> = Vec::new();
    for n in names {
        let opened: Result<Box<dyn Backend>, BackendError> = match n {
            "cpu" => Ok(Box::new(CpuBackend::new(load_kernels(&[])?))),
            "vulkan" => Vulkan::new().map(|v| Box::new(v) as Box<dyn Backend>),
            _ => onekernel_runtime::cuda::Cuda::new().map(|v| Box::new(v) as Box<dyn Backend>),
        };
        match opened {
            Ok(b) => {
                let i = b.info();
                eprintln!(
                    "{n}: {} ({}), subgroup {:?}, fma {}, f16 widening {}, async copies {}",
                    i.device,
                    i.driver,
                    i.subgroup_size,
                    i.fma,
                    i.f16_widening,
                    if i.async_copies { "cp.async" } else { "synchronous" }
                );
                out.push(b);
            }
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
    /// Timed dispatches per measurement.
    pub runs: u32,
    /// The generated directory.
    pub out: PathBuf,
    /// Where evidence JSON goes, if anywhere.
    pub evidence: Option<PathBuf>,
    /// `--quick` was given.
    pub quick: bool,
    /// `--shape BxL` (repeatable): measure only these (batch, length) shapes.
    pub shapes: Vec<(u32, u32)>,
    /// `--fast-chunk N`: the fast mode's chunk length instead of the scheduler's choice.
    pub fast_chunk: Option<u32>,
    /// `--det-chunks N` (1 or 2): deterministic chunks per workgroup instead of the
    /// runtime's choice.
    pub det_chunks: Option<u32>,
    /// `--det-long-after N`: the longest sequence the deterministic mode cuts into
    /// 128-token chunks instead of the runtime's `DETERMINISTIC_LONG_AFTER` (other bits
    /// for sequences between the two; for measuring where the threshold should be).
    pub det_long_after: Option<u32>,
    /// `--tensor-cores 2|3|det,…`: also time the paged step on tensor cores
    /// (`attn_decode_chunk_mma`, class `fast`) in these modes, where the backend runs it.
    pub tensor_cores: Vec<TensorCoreMode>,
}

/// A tensor-core step `onekernel bench --tensor-cores` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorCoreMode {
    /// The scheduler's chunks with 2 or 3 pipeline stages (`2`, `3`).
    Stages(u32),
    /// The fixed chunks of `Split::tensor_cores_deterministic` (`det`).
    Deterministic,
}

impl TensorCoreMode {
    /// The mode's name in the evidence JSON.
    pub fn label(self) -> &'static str {
        match self {
            TensorCoreMode::Stages(2) => "tensor_cores_2stage",
            TensorCoreMode::Stages(_) => "tensor_cores_3stage",
            TensorCoreMode::Deterministic => "tensor_cores_det",
        }
    }
}

impl BenchOptions {
    /// Parses `args`; `quick_allowed` says whether `--quick` exists for this program.
    pub fn parse(args: &[String], quick_allowed: bool) -> Result<Self> {
        let mut o = BenchOptions { backends: "cuda,vulkan".into(), runs: 50, out: PathBuf::from("generated"), evidence: None, quick: false, shapes: Vec::new(), fast_chunk: None, det_chunks: None, det_long_after: None, tensor_cores: Vec::new() };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |flag: &str| it.next().cloned().ok_or_else(|| anyhow::anyhow!("{flag} needs a value"));
            match a.as_str() {
                "--backend" => o.backends = value("--backend")?,
                "--runs" => o.runs = value("--runs")?.parse().context("--runs takes a number")?,
                "--out" => o.out = PathBuf::from(value("--out")?),
                "--evidence" => o.evidence = Some(PathBuf::from(value("--evidence")?)),
                "--quick" if quick_allowed => o.quick = true,
                "--tensor-cores" if quick_allowed => {
                    let v = value("--tensor-cores")?;
                    for s in v.split(',') {
                        match s.parse::<u32>() {
                            Ok(n @ 2..=3) => o.tensor_cores.push(TensorCoreMode::Stages(n)),
                            _ if s == "det" => o.tensor_cores.push(TensorCoreMode::Deterministic),
                            _ => bail!("--tensor-cores takes 2, 3 (pipeline stages) or det (fixed chunks), comma-separated (got `{v}`)"),
                        }
                    }
                }
                "--shape" if quick_allowed => {
                    let v = value("--shape")?;
                    let parsed = v.split_once('x').and_then(|(b, l)| Some((b.parse::<u32>().ok()?, l.parse::<u32>().ok()?)));
                    match parsed {
                        Some((b, l)) if b > 0 && l > 0 => o.shapes.push((b, l)),
                        _ => bail!("--shape takes BATCHxLENGTH, e.g. 16x32768 (got `{v}`)"),
                    }
                }
                "--fast-chunk" if quick_allowed => {
                    let v = value("--fast-chunk")?;
                    match v.parse::<u32>() {
                        Ok(n) if (1..=512).contains(&n) => o.fast_chunk = Some(n),
                        _ => bail!("--fast-chunk takes a chunk length of 1 … 512 tokens (got `{v}`; more than 256 needs a backend with asynchronous copies)"),
                    }
                }
                "--det-chunks" if quick_allowed => {
                    let v = value("--det-chunks")?;
                    match v.parse::<u32>() {
                        Ok(n) if (1..=2).contains(&n) => o.det_chunks = Some(n),
                        _ => bail!("--det-chunks takes 1 or 2 deterministic chunks per workgroup (got `{v}`)"),
                    }
                }
                "--det-long-after" if quick_allowed => {
                    let v = value("--det-long-after")?;
                    match v.parse::<u32>() {
                        Ok(n) if n > 0 => o.det_long_after = Some(n),
                        _ => bail!("--det-long-after takes a sequence length of at least 1 token (got `{v}`)"),
                    }
                }
                other => bail!("unknown argument `{other}`\n\n{}", crate::USAGE),
            }
        }
        if o.runs == 0 {
            bail!("--runs must be at least 1");
        }
        Ok(o)
    }
}

/// Bytes the benchmarks' L2 flush reads before each timed unit: 128 MiB, more than twice
/// the 50 MB L2 of an H100 or H200.
pub const L2_FLUSH_BYTES: u64 = 128 << 20;

/// How the flush works, as the evidence JSON states it.
pub const L2_FLUSH_METHOD: &str = "read_words over zeroed scratch before each timed unit (clean L2 lines; a memset before the twenty-fifth session)";

/// Sets `b`'s L2 flush: the manifest's `read_words` over [`L2_FLUSH_BYTES`] of scratch
/// (docs/PERFORMANCE.md, "Method"). The manifest's artifacts are in `out`.
pub fn set_l2_flush(b: &mut dyn Backend, manifest: &Manifest, out: &Path) -> Result<()> {
    let reader = manifest.kernel(onekernel_runtime::l2_flush::READER).ok_or_else(|| anyhow::anyhow!("`{}` (the benchmarks' L2 flush) is not in the manifest of {}", onekernel_runtime::l2_flush::READER, out.display()))?;
    b.set_l2_flush(Some(onekernel_runtime::L2Flush { reader, artifacts: out, bytes: L2_FLUSH_BYTES }))?;
    Ok(())
}

/// Bytes of the driver copy the benchmarks measure beside `copy_words`: 1 GiB, as
/// ANCHORS.md's device-to-device copy (1 MiB in a `--quick` smoke run).
pub fn driver_copy_bytes(quick: bool) -> u64 {
    if quick {
        1 << 20
    } else {
        1 << 30
    }
}

/// The driver's own device-to-device copy bandwidth in GB/s, counting bytes read and
/// written: the median of 20 timed copies of `bytes` after 3 warm-ups. `None` where the
/// backend has no device memory or no timestamps.
pub fn driver_copy_gbs(b: &mut dyn Backend, bytes: u64) -> Result<Option<f64>> {
    let Some(t) = b.time_driver_copy(bytes, 23)? else { return Ok(None) };
    let m = median(&t[3.min(t.len())..]);
    Ok(m.is_finite().then(|| 2.0 * bytes as f64 / m))
}

/// The API call behind [`driver_copy_gbs`] on `backend`, for evidence files.
pub fn driver_copy_api(backend: &str) -> &'static str {
    match backend {
        "cuda" => "cuMemcpyDtoDAsync",
        "vulkan" => "vkCmdCopyBuffer",
        _ => "none",
    }
}

/// The median of the finite values (NaN when there are none).
pub fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}
