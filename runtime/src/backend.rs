//! The backend interface: what every implementation (the interpreter, Vulkan, CUDA)
//! offers, and the launch description it takes, built from a manifest entry.

use crate::args::{ArgValue, Args};
use onekernel_dsl::ir::Access;
use onekernel_dsl::manifest::KernelManifest;
use onekernel_dsl::types::Literal;
use serde::Serialize;
use std::path::Path;
use thiserror::Error;

/// What a backend runs on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceInfo {
    /// `cpu`, `vulkan`, `cuda` or `msl-emu`.
    pub backend: String,
    /// Device name as the driver reports it.
    pub device: String,
    /// Driver name and version.
    pub driver: String,
    /// Hardware subgroup (warp, SIMD) size, where the API reports one.
    pub subgroup_size: Option<u32>,
    /// How the device treats f32 subnormals, as far as the API tells.
    pub denormals: String,
    /// How `fma` is computed: native fused, or exactly emulated.
    pub fma: String,
    /// How f16 halves widen to f32: the hardware conversion, or subnormal halves built
    /// by hand where the driver's conversion is not known to keep them.
    pub f16_widening: String,
    /// Whether the DSL's `async_copy` overlaps the copy with later work (CUDA on sm_80
    /// and newer: `cp.async`). Elsewhere it is a plain load and store, and kernels
    /// choose their register-staged variants (`async_k = false` for decode attention).
    pub async_copies: bool,
    /// Whether `tile_mma_panel` runs asynchronously until `tile_mma_wait` (CUDA compiled
    /// for sm_90a: `wgmma`, whose compiler reports what it serialized:
    /// [`Backend::compiler_warnings`]). Elsewhere a panel product is complete when the
    /// statement returns.
    pub async_panels: bool,
    /// The most shared memory one workgroup may declare, where the device has a limit
    /// below the validator's 227 KiB (NVIDIA's Vulkan: 48 KiB) or reports one (CUDA's
    /// opt-in maximum); `None` on the interpreter and msl-emu, which take any variant.
    /// A launch past it is refused with `BackendError::Unsupported`; runtimes that have
    /// a choice pick a variant within it.
    pub max_shared_bytes: Option<u32>,
    /// Whether storage-buffer accesses are bounds-checked by the driver (Vulkan), or
    /// compiled without checks because sizes are checked before launch (docs/RUNTIME.md).
    pub buffer_checks: String,
    /// Which checks a validation layer adds to every launch (Vulkan: the Khronos layer
    /// and the features enabled in it); `none` where nothing is layered on the driver.
    pub validation: String,
}

impl DeviceInfo {
    /// The device name for file names: lower-case alphanumeric runs joined by `-`
    /// ("NVIDIA H200" → `nvidia-h200`).
    pub fn slug(&self) -> String {
        let s: String = self.device.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' }).collect();
        s.split('-').filter(|s| !s.is_empty()).collect::<Vec<_>>().join("-")
    }
}

/// One launch: a kernel's manifest entry, the spec values of a variant, the grid.
#[derive(Clone, Debug)]
pub struct Launch<'a> {
    /// The kernel's manifest entry.
    pub kernel: &'a KernelManifest,
    /// Directory the manifest's artifact paths are relative to.
    pub artifacts: &'a Path,
    /// Value of every spec constant, in id order (a manifest variant's `spec`).
    pub spec: &'a [(String, Literal)],
    /// Workgroups to dispatch.
    pub groups: [u32; 3],
}

/// Timing of a launch, where the backend measures it on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// Device time of the dispatch in nanoseconds (timestamp queries / events).
    pub device_ns: Option<f64>,
}

/// Why a backend could not run a launch.
#[derive(Debug, Error)]
pub enum BackendError {
    /// The backend is not present on this machine (no loader, no driver, no device).
    #[error("{backend} backend unavailable: {reason}")]
    Unavailable {
        /// Backend name.
        backend: &'static str,
        /// Why.
        reason: String,
    },
    /// The arguments do not fit the kernel.
    #[error("kernel `{kernel}` ({backend}): {message}")]
    Arguments {
        /// Kernel.
        kernel: String,
        /// Backend.
        backend: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The API reported an error.
    #[error("kernel `{kernel}` ({backend}): {message}")]
    Api {
        /// Kernel.
        kernel: String,
        /// Backend.
        backend: &'static str,
        /// The API's message.
        message: String,
    },
    /// The device cannot run this variant (e.g. it declares more shared memory than the
    /// device offers); callers such as the validator report it as skipped.
    #[error("kernel `{kernel}` variant `{variant}` ({backend}): not supported on this device: {reason}")]
    Unsupported {
        /// Kernel.
        kernel: String,
        /// Variant label.
        variant: String,
        /// Backend.
        backend: &'static str,
        /// Why.
        reason: String,
    },
    /// The Khronos validation layer reported a problem.
    #[error("kernel `{kernel}` (vulkan): the validation layer reported:\n{}", .messages.join("\n"))]
    ValidationLayer {
        /// Kernel.
        kernel: String,
        /// Every message.
        messages: Vec<String>,
    },
    /// The interpreter failed.
    #[error(transparent)]
    Interpreter(#[from] crate::cpu::InterpError),
    /// An artifact could not be read.
    #[error("kernel `{kernel}`: cannot read `{path}`: {source}")]
    Artifact {
        /// Kernel.
        kernel: String,
        /// Path.
        path: String,
        /// OS error.
        source: std::io::Error,
    },
}

/// A device that runs generated kernels.
pub trait Backend {
    /// `cpu`, `vulkan`, `cuda` or `msl-emu`.
    fn name(&self) -> &'static str;
    /// The device.
    fn info(&self) -> &DeviceInfo;
    /// Runs one launch; read-write buffers in `args` are updated in place.
    fn launch(&mut self, launch: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError>;

    /// [`Backend::launch`] with the workgroups in the reverse of the order `launch` runs
    /// them, where the backend chooses the order (the interpreter); `None` where it does
    /// not (a GPU). The validator compares the two for kernels with `last_arrival`,
    /// whose results must not depend on which workgroup arrives last.
    fn launch_reversed(&mut self, _launch: &Launch, _args: &mut Args) -> Option<Result<LaunchStats, BackendError>> {
        None
    }

    /// What the backend's compilers said about the kernels it has compiled so far that
    /// changes their speed and not their results, as "kernel (entry): message": on CUDA,
    /// ptxas's warnings that it serialized `wgmma` products or injected waits for them
    /// (docs/RUNTIME.md, "Compiler warnings"). Empty where a backend has none to report.
    fn compiler_warnings(&self) -> Vec<String> {
        Vec::new()
    }

    /// The one timed primitive, which benchmark harnesses compose: `unit.work` run
    /// `unit.runs` times, each run after `unit.prelude` (untimed) where one is given.
    /// GPU backends upload the buffers of `args` (one argument set per launch) once,
    /// time each run on the device from before its first command to after its last,
    /// and read written buffers back once after the last run, so kernels must be
    /// idempotent (outputs a function of the inputs only). Returns each run's device
    /// time in ns (NaN where the device has no timer).
    ///
    /// The default runs the launches one by one and adds their device times; it skips
    /// the prelude (a prelude shapes the device's state for timing, such as an L2 flush,
    /// and the interpreter has none) and has no driver copy.
    fn time(&mut self, unit: &TimedUnit, args: &mut [Args]) -> Result<Vec<f64>, BackendError> {
        match unit.work {
            Work::Launches { launches, buffers } => launch_one_by_one(self, launches, args, unit.runs, buffers),
            Work::DriverCopy { .. } => Err(BackendError::Unsupported {
                kernel: DRIVER_COPY.into(),
                variant: "-".into(),
                backend: self.name(),
                reason: "the backend has no device memory to copy".into(),
            }),
        }
    }
}

/// What a [`TimedUnit`] runs.
#[derive(Clone, Copy, Debug)]
pub enum Work<'a> {
    /// Launches in order, each binding buffers as `buffers` says: a decode step's
    /// kernels passing results on ([`BufferScope::Shared`]), or a model's layers, each
    /// over its own copy ([`BufferScope::PerLaunch`]). Between two launches of a run
    /// nothing else happens (CUDA launches all but the first as programmatic dependents
    /// from sm_90, Vulkan puts a barrier between dispatches), as an application runs them.
    Launches {
        /// The launches, one argument set each.
        launches: &'a [Launch<'a>],
        /// How launches that bind the same buffer name share it.
        buffers: BufferScope,
    },
    /// The driver's own device-to-device copy of `bytes` (CUDA `cuMemcpyDtoDAsync`,
    /// Vulkan `vkCmdCopyBuffer`): the bandwidth ceiling a benchmark compares with.
    DriverCopy {
        /// Bytes copied per run.
        bytes: u64,
    },
}

/// One timed measurement: [`Backend::time`]'s argument.
#[derive(Clone, Copy, Debug)]
pub struct TimedUnit<'a> {
    /// What each run does.
    pub work: Work<'a>,
    /// Runs (at least one).
    pub runs: u32,
    /// A launch run before each run and not timed (a benchmark's L2 flush).
    pub prelude: Option<&'a Prelude<'a>>,
}

/// A launch a backend runs before each run of a [`TimedUnit`], untimed: its buffers
/// are uploaded the first time a backend meets it (by [`Prelude::id`]) and stay on the
/// device; what it writes is never read back. Its launch and arguments cannot change
/// after construction, so a backend may keep its device copy for as long as it lives.
#[derive(Debug)]
pub struct Prelude<'a> {
    id: u64,
    launch: Launch<'a>,
    args: Args,
}

impl<'a> Prelude<'a> {
    /// A prelude of `launch` with `args` (checked against the kernel when a backend
    /// prepares it).
    pub fn new(launch: Launch<'a>, args: Args) -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        Prelude { id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed), launch, args }
    }

    /// A number no other prelude of this process has.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The launch.
    pub fn launch(&self) -> &Launch<'a> {
        &self.launch
    }

    /// Its arguments.
    pub fn args(&self) -> &Args {
        &self.args
    }
}

/// The default timed unit of [`Backend::time`]: the launches one by one, `runs` times,
/// their device times added; with [`BufferScope::Shared`] read-write buffers pass on
/// by name.
fn launch_one_by_one<B: Backend + ?Sized>(
    backend: &mut B,
    launches: &[Launch],
    args: &mut [Args],
    runs: u32,
    scope: BufferScope,
) -> Result<Vec<f64>, BackendError> {
    check_sequence(backend.name(), launches, args, scope)?;
    (0..runs.max(1))
        .map(|_| {
            let mut t = 0.0;
            for i in 0..launches.len() {
                t += backend.launch(&launches[i], &mut args[i])?.device_ns.unwrap_or(f64::NAN);
                if scope == BufferScope::Shared {
                    pass_on_buffers(launches, args, i);
                }
            }
            Ok(t)
        })
        .collect()
}

/// The name errors of [`Work::DriverCopy`] carry in place of a kernel's.
pub const DRIVER_COPY: &str = "driver copy";

/// Checks the arguments against the manifest before anything touches a device: every
/// buffer present with the declared element type and a non-zero length, every push
/// constant present with its type, nothing unknown, and a scalar that names a spec
/// constant equal to the launch's value.
pub fn check_args(backend: &'static str, l: &Launch, args: &Args) -> Result<(), BackendError> {
    let k = l.kernel;
    let err = |message: String| BackendError::Arguments { kernel: k.name.clone(), backend, message };
    // A spec constant's value in this launch: the variant's, else its default.
    let spec_value = |name: &str| -> Option<Literal> {
        let default = k.spec_constants.iter().find(|s| s.name == name)?.default;
        Some(l.spec.iter().find(|(n, _)| n == name).map_or(default, |(_, v)| *v))
    };
    // The value of a parameter for length expressions: a spec constant's in this
    // launch, a push constant's from the arguments.
    let param = |p: onekernel_dsl::ir::ParamId| -> Option<Literal> {
        let name = k.param_names.get(p.0 as usize)?;
        if let Some(v) = spec_value(name) {
            return Some(v);
        }
        match args.get(name) {
            Some(ArgValue::Scalar(v)) => Some(*v),
            _ => None,
        }
    };
    for b in &k.buffers {
        match args.get(&b.name) {
            Some(ArgValue::Buffer(h)) if h.elem() != b.elem => {
                return Err(err(format!("buffer `{}` is declared &[{}] but a {} buffer was given", b.name, b.elem, h.elem())))
            }
            Some(ArgValue::Buffer(h)) if h.is_empty() => return Err(err(format!("buffer `{}` is empty", b.name))),
            Some(ArgValue::Buffer(h)) => {
                if let Some(len) = &b.len {
                    let need = onekernel_dsl::shapes::eval(len, &param, l.groups, k.workgroup)
                        .map_err(|m| err(format!("length of buffer `{}`: {m}", b.name)))?;
                    if (h.len() as u64) < need {
                        return Err(err(format!(
                            "buffer `{}` has {} elements but the kernel declares at least {} = {need} for this launch",
                            b.name,
                            h.len(),
                            b.len_text.as_deref().unwrap_or("?")
                        )));
                    }
                }
            }
            _ => return Err(err(format!("missing buffer `{}` (&[{}])", b.name, b.elem))),
        }
    }
    for p in &k.push_constants {
        match args.get(&p.name) {
            Some(ArgValue::Scalar(v)) if v.ty() == p.ty => {}
            Some(ArgValue::Scalar(v)) => return Err(err(format!("`{}` is {} but a {} was given", p.name, p.ty, v.ty()))),
            _ => return Err(err(format!("missing push constant `{}` ({})", p.name, p.ty))),
        }
    }
    for name in args.names() {
        // A scalar that names a spec constant must say what the launch compiles: the
        // kernel runs with the launch's value, whatever the arguments say.
        if let (Some(ArgValue::Scalar(given)), Some(value)) = (args.get(name), spec_value(name)) {
            if *given != value {
                // The values alone where the types agree; with their suffixes where not.
                let (v, g) = if given.ty() == value.ty() { (value.value_text(), given.value_text()) } else { (value.to_string(), given.to_string()) };
                return Err(err(format!("`{name}` ({}) is a spec constant, {v} in this launch; the arguments give {g}", value.ty())));
            }
            continue;
        }
        let known = k.buffers.iter().any(|b| b.name == name) || k.push_constants.iter().any(|p| p.name == name) || k.has_spec_constant(name);
        if !known {
            return Err(err(format!("unknown argument `{name}`")));
        }
    }
    Ok(())
}

/// How the launches of a timed unit bind buffers that carry the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferScope {
    /// One buffer per name across the unit: a decode step's kernels pass their results
    /// on ([`Work::Launches`]).
    Shared,
    /// Every launch its own buffers: a model's layers, each kernel over its own cache
    /// ([`Work::Launches`]).
    PerLaunch,
}

/// Checks a sequence of launches before anything runs: one argument set per launch, at
/// least one launch, and, where buffers are [`BufferScope::Shared`], every buffer name
/// bound by several launches bound to buffers of one element type and size (they are
/// one buffer).
pub fn check_sequence(backend: &'static str, launches: &[Launch], args: &[Args], scope: BufferScope) -> Result<(), BackendError> {
    let name = |i: usize| launches.get(i).map_or_else(|| "sequence".to_string(), |l| l.kernel.name.clone());
    if launches.is_empty() || launches.len() != args.len() {
        return Err(BackendError::Arguments {
            kernel: name(0),
            backend,
            message: format!("a sequence of {} launches with {} argument sets", launches.len(), args.len()),
        });
    }
    if scope == BufferScope::PerLaunch {
        return Ok(());
    }
    for (i, (l, a)) in launches.iter().zip(args).enumerate() {
        for b in &l.kernel.buffers {
            let Some(h) = a.get_buffer(&b.name) else { continue };
            for (j, (l2, a2)) in launches.iter().zip(args).enumerate().skip(i + 1) {
                let Some(h2) = a2.get_buffer(&b.name).filter(|_| l2.kernel.buffers.iter().any(|b2| b2.name == b.name)) else { continue };
                if h.elem() != h2.elem() || h.as_bytes().len() != h2.as_bytes().len() {
                    return Err(BackendError::Arguments {
                        kernel: name(i),
                        backend,
                        message: format!(
                            "buffer `{}` is one buffer across the sequence, but launch {i} binds {} {} elements and launch {j} (`{}`) {} {} elements",
                            b.name,
                            h.len(),
                            h.elem(),
                            name(j),
                            h2.len(),
                            h2.elem()
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// How the launches of a sequence bind their buffers: one device buffer per name
/// ([`BufferScope::Shared`]) or per launch and name ([`BufferScope::PerLaunch`]).
#[derive(Debug, PartialEq, Eq)]
pub struct SequenceBindings {
    /// Each device buffer, in first-use order, with its name and the launch whose
    /// arguments it is uploaded from (the first that binds it; [`check_sequence`] makes
    /// the others equal in size).
    pub buffers: Vec<(String, usize)>,
    /// Per launch, indices into `buffers` in the kernel's binding order.
    pub bound: Vec<Vec<usize>>,
    /// Per buffer, whether some launch writes it (it is read back after the sequence).
    pub written: Vec<bool>,
    /// Per buffer, the launches that bind it (their arguments get what is read back).
    pub readers: Vec<Vec<usize>>,
}

/// The bindings of `launches` with `args` (what both GPU backends allocate and bind).
pub fn sequence_bindings(launches: &[Launch], args: &[Args], scope: BufferScope) -> SequenceBindings {
    let mut s = SequenceBindings { buffers: Vec::new(), bound: Vec::new(), written: Vec::new(), readers: Vec::new() };
    for (i, (l, a)) in launches.iter().zip(args).enumerate() {
        let mut bound = Vec::new();
        for b in l.kernel.buffers.iter().filter(|b| a.get_buffer(&b.name).is_some()) {
            let shared = match scope {
                BufferScope::Shared => s.buffers.iter().position(|(n, _)| *n == b.name),
                BufferScope::PerLaunch => None,
            };
            let at = shared.unwrap_or_else(|| {
                s.buffers.push((b.name.clone(), i));
                s.written.push(false);
                s.readers.push(Vec::new());
                s.buffers.len() - 1
            });
            s.written[at] |= b.access == Access::ReadWrite;
            s.readers[at].push(i);
            bound.push(at);
        }
        s.bound.push(bound);
    }
    s
}

/// After launch `i` of a sequence: its read-write buffers copied into every other
/// launch's arguments that bind the same name (one buffer, as on a device).
pub fn pass_on_buffers(launches: &[Launch], args: &mut [Args], i: usize) {
    for b in launches[i].kernel.buffers.iter().filter(|b| b.access == Access::ReadWrite) {
        let Some(h) = args[i].get_buffer(&b.name).cloned() else { continue };
        for (j, a) in args.iter_mut().enumerate() {
            if j != i {
                if let Some(slot) = a.get_buffer_mut(&b.name) {
                    *slot = h.clone();
                }
            }
        }
    }
}

/// The push-constant bytes of a launch, in manifest order (4 bytes each).
pub fn push_bytes(k: &KernelManifest, args: &Args) -> Vec<u8> {
    let mut out = vec![0u8; k.push_constant_bytes as usize];
    for p in &k.push_constants {
        if let Some(ArgValue::Scalar(v)) = args.get(&p.name) {
            out[p.offset as usize..p.offset as usize + 4].copy_from_slice(&v.bits().to_le_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{sequence_bindings, BufferScope, DeviceInfo, Launch, SequenceBindings};
    use crate::args::Args;
    use crate::buffer::HostBuffer;
    use onekernel_dsl::manifest::Manifest;
    use std::path::PathBuf;

    #[test]
    fn a_sequence_binds_each_buffer_name_once_and_reads_back_what_any_launch_writes() {
        let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
        let m: Manifest = serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap();
        let (chunk, combine) = (m.kernel("attn_decode_chunk").unwrap(), m.kernel("attn_decode_combine").unwrap());
        let launch = |k| Launch { kernel: k, artifacts: &generated, spec: &[], groups: [1, 1, 1] };
        let with = |names: &[&str]| names.iter().fold(Args::new(), |a, n| a.buffer(n, HostBuffer::from_u32(&[0])));
        // The chunk kernel binds some of its buffers, the combine its own and shared ones.
        let args = [with(&["q", "kv_len", "part_m", "part_acc"]), with(&["part_m", "part_acc", "kv_len", "out"])];
        let b = sequence_bindings(&[launch(chunk), launch(combine)], &args, BufferScope::Shared);
        let names: Vec<(&str, usize)> = b.buffers.iter().map(|(n, i)| (n.as_str(), *i)).collect();
        // In each kernel's binding order; a name first bound by the chunk kernel is uploaded from its arguments.
        assert_eq!(names, [("q", 0), ("kv_len", 0), ("part_m", 0), ("part_acc", 0), ("out", 1)]);
        assert_eq!(b.bound, [vec![0, 1, 2, 3], vec![2, 3, 1, 4]]);
        // part_* written by the chunk kernel, out by the combine; q and kv_len only read.
        assert_eq!(b.written, [false, false, true, true, true]);
        // What is read back goes to every launch that binds the name.
        assert_eq!(b.readers, [vec![0], vec![0, 1], vec![0, 1], vec![0, 1], vec![1]]);
        let one = sequence_bindings(&[launch(chunk)], &args[..1], BufferScope::Shared);
        let four = vec![vec![0]; 4];
        assert_eq!(
            one,
            SequenceBindings {
                buffers: names[..4].iter().map(|(n, _)| (n.to_string(), 0)).collect(),
                bound: vec![vec![0, 1, 2, 3]],
                written: vec![false, false, true, true],
                readers: four
            }
        );
    }

    #[test]
    fn layers_bind_buffers_of_their_own_whatever_their_names() {
        let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
        let m: Manifest = serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap();
        let copy = m.kernel("copy_words").unwrap();
        let launch = Launch { kernel: copy, artifacts: &generated, spec: &[], groups: [1, 1, 1] };
        let args = [0u32, 1].map(|v| Args::new().buffer("src", HostBuffer::from_u32(&[v])).buffer("dst", HostBuffer::from_u32(&[0])));
        let b = sequence_bindings(&[launch.clone(), launch], &args, BufferScope::PerLaunch);
        let names: Vec<(&str, usize)> = b.buffers.iter().map(|(n, i)| (n.as_str(), *i)).collect();
        assert_eq!(names, [("src", 0), ("dst", 0), ("src", 1), ("dst", 1)]);
        assert_eq!(b.bound, [vec![0, 1], vec![2, 3]]);
        assert_eq!(b.written, [false, true, false, true]);
        assert_eq!(b.readers, [vec![0], vec![0], vec![1], vec![1]]);
    }

    #[test]
    fn device_slugs_are_lower_case_runs_joined_by_dashes() {
        let slug = |d: &str| DeviceInfo { device: d.into(), ..Default::default() }.slug();
        assert_eq!(slug("NVIDIA H200"), "nvidia-h200");
        assert_eq!(slug("llvmpipe (LLVM 15.0.6, 256 bits)"), "llvmpipe-llvm-15-0-6-256-bits");
        assert_eq!(slug(" -- "), "");
    }
}
