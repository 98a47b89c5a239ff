//! The CUDA backend (cudarc, driver and NVRTC loaded at run time). It compiles the
//! generated `.cu` with NVRTC and the contract's options (`--fmad=false --ftz=false`,
//! precise division and square root) for the device's architecture, caches modules,
//! launches the variant's `extern "C"` entry and times it with events. A module holds
//! one entry: the generated file up to its first `OK_INSTANCE(entry, values…)` line,
//! then that macro for the launched variant alone, so a process compiles the variants
//! it runs and no others (the decode-attention chunk kernel's eight variants took NVRTC
//! and the driver about 6 s each on the H200). Spec values outside the manifest's
//! variants (a head size the catalogue does not list) get an instance the same way.
//! From sm_90 a sequence's later launches (the decode step's combine after its chunk
//! kernel) are programmatic dependent launches (`raw_launch`): each may be scheduled
//! while the kernel before it drains, and its entry waits for that kernel's writes.
//! Without a CUDA driver the backend reports itself unavailable; it never panics.

use crate::args::Args;
use crate::backend::{
    check_args, check_sequence, push_bytes, sequence_bindings, Backend, BackendError, BufferScope, DeviceInfo, Launch, LaunchStats, Prelude,
    TimedUnit, Work, DRIVER_COPY,
};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig};
use cudarc::nvrtc::Ptx;
use onekernel_dsl::types::Literal;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

mod ptxas;
mod raw_launch;

/// Push constants as one by-value kernel argument (the `ok_push_<k>` struct): the
/// driver copies exactly the parameter's size from this block.
#[repr(C)]
#[derive(Clone, Copy)]
struct PushBlock([u8; 128]);

/// A CUDA device.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: &'static str,
    /// Compiled modules by source hash and entry.
    modules: HashMap<String, Arc<CudaModule>>,
    /// The prelude of the last timed unit that had one, kept while it comes back.
    prelude: Option<PreparedPrelude>,
    /// Dynamic shared bytes by (source hash, entry), read and checked once per entry.
    dyn_shared: HashMap<(String, String), u32>,
    /// Whether a sequence's later launches are programmatic dependent launches (sm_90
    /// and later, unless `ONEKERNEL_CUDA_PDL=0`).
    dependent_launch: bool,
    info: DeviceInfo,
    /// ptxas's performance warnings (serialized `wgmma`, injected waits) from each
    /// module's compile, as "kernel (entry): message", in compile order.
    warnings: Vec<String>,
}

/// One launch ready to go: the function, its push block and grid.
struct Prepared {
    func: CudaFunction,
    push: PushBlock,
    has_push: bool,
    cfg: LaunchConfig,
}

/// A timed unit's prelude ([`Prelude`]) on the device: its launch and its buffers,
/// uploaded once, in binding order.
struct PreparedPrelude {
    /// [`Prelude::id`] of the prelude this was prepared from.
    id: u64,
    launch: Prepared,
    buffers: Vec<CudaSlice<u8>>,
}

/// Template arguments of spec values, as the generated instances spell them.
fn template_args(spec: &[(String, Literal)]) -> String {
    spec.iter()
        .map(|(_, v)| match v {
            Literal::Bool(b) => b.to_string(),
            Literal::U32(x) => format!("{x}u"),
            Literal::I32(x) => format!("({x})"),
            Literal::F32(bits) => format!("0x{bits:08x}u"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The source of the module of `entry`: a generated file with instances cut before its
/// first `OK_INSTANCE(` line (the prelude: helpers, the templated kernel body and the
/// macro), then `entry`'s instance with template arguments `args`; a file without
/// instances (one entry, no spec constants) as it is.
fn module_source(src: &str, entry: &str, args: &str) -> String {
    let Some(cut) = src.find("\nOK_INSTANCE(") else { return src.to_string() };
    // The first variant's label comment goes with its instance.
    let prelude = src[..cut].rsplit_once('\n').filter(|(_, last)| last.starts_with("// Variant ")).map_or(&src[..cut], |(p, _)| p);
    format!("{}\n// This module's instance.\nOK_INSTANCE({entry}, {args})\n", prelude.trim_end())
}

fn unavailable(reason: impl std::fmt::Display) -> BackendError {
    BackendError::Unavailable { backend: "cuda", reason: reason.to_string() }
}

/// The NVRTC architecture of a compute capability.
fn arch(major: i32, minor: i32) -> &'static str {
    match (major, minor) {
        (7, 0) => "sm_70",
        (7, 5) => "sm_75",
        (8, 0) => "sm_80",
        (8, 6) => "sm_86",
        (8, 7) => "sm_87",
        (8, 9) => "sm_89",
        (9, 0) => "sm_90",
        (10, 0) => "sm_100",
        (12, 0) => "sm_120",
        (m, _) if m >= 10 => "sm_100",
        _ => "sm_70",
    }
}

impl Cuda {
    /// Opens device 0 (`ONEKERNEL_CUDA_DEVICE` selects another ordinal).
    pub fn new() -> Result<Self, BackendError> {
        // cudarc panics when a library is missing; turn that into "unavailable".
        let present = catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false);
        if !present {
            return Err(unavailable("no CUDA driver library (libcuda) on this machine"));
        }
        let nvrtc = catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false);
        if !nvrtc {
            return Err(unavailable("no NVRTC library (libnvrtc) on this machine"));
        }
        let ordinal = std::env::var("ONEKERNEL_CUDA_DEVICE").ok().and_then(|s| s.parse().ok()).unwrap_or(0);
        let ctx = catch_unwind(|| CudaContext::new(ordinal))
            .map_err(|_| unavailable("the CUDA driver could not be initialized"))?
            .map_err(|e| unavailable(format!("no CUDA device {ordinal}: {e}")))?;
        let name = ctx.name().unwrap_or_else(|_| "unknown CUDA device".into());
        let (major, minor) = ctx.compute_capability().map_err(|e| unavailable(e.to_string()))?;
        let stream = ctx.default_stream();
        // Hopper's own instructions (wgmma, for `tile_mma_panel`) need the sm_90a target;
        // ONEKERNEL_CUDA_WGMMA=0 compiles for plain sm_90, where panels take ldmatrix and
        // mma.sync (for comparisons).
        let arch = match arch(major, minor) {
            "sm_90" if std::env::var("ONEKERNEL_CUDA_WGMMA").as_deref() != Ok("0") => "sm_90a",
            a => a,
        };
        // cp.async exists from sm_80; ONEKERNEL_CUDA_ASYNC=0 makes kernels take their
        // register-staged variants instead (for comparisons).
        let async_copies = major >= 8 && std::env::var("ONEKERNEL_CUDA_ASYNC").as_deref() != Ok("0");
        // Programmatic dependent launch exists from sm_90; ONEKERNEL_CUDA_PDL=0 launches
        // a sequence's kernels one after the other instead (for comparisons).
        let dependent_launch = major >= 9 && std::env::var("ONEKERNEL_CUDA_PDL").as_deref() != Ok("0");
        // The opt-in maximum per workgroup, which `read_dynamic_shared` holds launches to.
        let max_shared_bytes = ctx
            .attribute(cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(|e| unavailable(format!("cuDeviceGetAttribute(MAX_SHARED_MEMORY_PER_BLOCK_OPTIN): {e}")))?
            .max(0) as u32;
        let info = DeviceInfo {
            backend: "cuda".into(),
            device: name,
            driver: format!(
                "CUDA driver, compute capability {major}.{minor}, NVRTC -arch={arch}{}",
                if dependent_launch { ", dependent launches" } else { "" }
            ),
            subgroup_size: Some(32),
            denormals: "preserved (-ftz=false)".into(),
            fma: "native fmaf (fused)".into(),
            f16_widening: "cvt.f32.f16 (exact)".into(),
            async_copies,
            async_panels: arch == "sm_90a",
            max_shared_bytes: Some(max_shared_bytes),
            buffer_checks: "none (CUDA pointers; sizes are checked before launch)".into(),
            validation: "none".into(),
        };
        Ok(Cuda {
            ctx,
            stream,
            arch,
            modules: HashMap::new(),
            prelude: None,
            dyn_shared: HashMap::new(),
            dependent_launch,
            info,
            warnings: Vec::new(),
        })
    }

    /// The module of `entry` (see the module docs), compiled on first use.
    fn module(&mut self, l: &Launch, entry: &str) -> Result<Arc<CudaModule>, BackendError> {
        let k = l.kernel;
        // Register tiles are mma.sync m16n8k16 fragments with f32 accumulators: sm_80 on.
        if k.tiles.is_some() && matches!(self.arch, "sm_70" | "sm_75") {
            let variant = k.variants.iter().find(|v| v.spec == l.spec).map_or_else(|| format!("{:?}", l.spec), |v| v.label.clone());
            let reason = format!("it uses register tiles (mma.sync m16n8k16 with f32 accumulators), which need sm_80; this device is {}", self.arch);
            return Err(BackendError::Unsupported { kernel: k.name.clone(), variant, backend: "cuda", reason });
        }
        let key = format!("{} {entry}", k.cuda.source.sha256);
        if let Some(m) = self.modules.get(&key) {
            return Ok(m.clone());
        }
        let path = l.artifacts.join(&k.cuda.source.path);
        let src = std::fs::read_to_string(&path).map_err(|source| BackendError::Artifact {
            kernel: k.name.clone(),
            path: path.display().to_string(),
            source,
        })?;
        let src = module_source(&src, entry, &template_args(l.spec));
        // The contract's options (--fmad=false --ftz=false, precise division and square
        // root) for the device's architecture.
        let options: Vec<String> =
            ["--ftz=false", "--prec-sqrt=true", "--prec-div=true", "--fmad=false", &format!("--gpu-architecture={}", self.arch), "-std=c++17"]
                .iter()
                .map(|o| o.to_string())
                .collect();
        let api = |message: String| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message };
        let (ptx, log) = catch_unwind(AssertUnwindSafe(|| ptxas::compile(&src, &format!("{}.cu", k.name), &options)))
            .map_err(|_| api("NVRTC could not be loaded".into()))?
            .map_err(|e| api(format!("NVRTC: {e}")))?;
        // ptxas's word on the `wgmma` products (serialized, or waits injected).
        self.warnings.extend(ptxas::performance_warnings(&log).into_iter().map(|w| format!("{} ({entry}): {w}", k.name)));
        let m = self.ctx.load_module(Ptx::from_src(ptx)).map_err(|e| api(format!("cuModuleLoadData: {e}")))?;
        self.modules.insert(key, m.clone());
        Ok(m)
    }
}

impl Cuda {
    /// The entry of a run-time instance for spec values outside the variants (same
    /// names and types as the manifest's, in order).
    fn runtime_instance(&self, l: &Launch) -> Result<String, BackendError> {
        let k = l.kernel;
        let same_kind = |a: &Literal, b: &Literal| std::mem::discriminant(a) == std::mem::discriminant(b);
        let shape_ok = k
            .variants
            .first()
            .is_some_and(|v| v.spec.len() == l.spec.len() && v.spec.iter().zip(l.spec).all(|((n, a), (m, b))| n == m && same_kind(a, b)));
        if !shape_ok {
            let want = k.variants.first().map(|v| v.spec.iter().map(|(n, v)| format!("{n}: {v}")).collect::<Vec<_>>().join(", ")).unwrap_or_default();
            return Err(BackendError::Arguments {
                kernel: k.name.clone(),
                backend: "cuda",
                message: format!("spec values must name the kernel's spec constants in order, with their types ({want})"),
            });
        }
        let args = template_args(l.spec);
        let tag: String = args.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
        Ok(format!("{}__rt_{tag}", k.name))
    }
}

impl Backend for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn compiler_warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn launch(&mut self, l: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError> {
        let times = self.run_sequence(std::slice::from_ref(l), std::slice::from_mut(args), 1, BufferScope::Shared, false)?;
        Ok(LaunchStats { device_ns: times.first().copied() })
    }

    fn time(&mut self, unit: &TimedUnit, args: &mut [Args]) -> Result<Vec<f64>, BackendError> {
        if let Some(p) = unit.prelude {
            self.use_prelude(p)?;
        }
        let (runs, prelude) = (unit.runs.max(1), unit.prelude.is_some());
        match unit.work {
            Work::Launches { launches, buffers } => self.run_sequence(launches, args, runs, buffers, prelude),
            Work::DriverCopy { bytes } => {
                let api = |what: &str, e: &dyn std::fmt::Display| BackendError::Api {
                    kernel: DRIVER_COPY.into(),
                    backend: "cuda",
                    message: format!("{what}: {e}"),
                };
                let src = self.stream.alloc_zeros::<u8>(bytes as usize).map_err(|e| api("cuMemAlloc", &e))?;
                let mut dst = self.stream.alloc_zeros::<u8>(bytes as usize).map_err(|e| api("cuMemAlloc", &e))?;
                self.timed_runs(runs, prelude, &api, |stream| stream.memcpy_dtod(&src, &mut dst).map_err(|e| api("cuMemcpyDtoDAsync", &e)))
            }
        }
    }
}

impl Cuda {
    /// Makes `p` the prepared prelude (kept while the same prelude comes back): its
    /// launch prepared and its buffers uploaded.
    fn use_prelude(&mut self, p: &Prelude) -> Result<(), BackendError> {
        if self.prelude.as_ref().is_some_and(|q| q.id == p.id()) {
            return Ok(());
        }
        self.prelude = None;
        let (l, a) = (p.launch(), p.args());
        let launch = self.prepare(l, a)?;
        let api = |what: &str, e: &dyn std::fmt::Display| BackendError::Api {
            kernel: l.kernel.name.clone(),
            backend: "cuda",
            message: format!("{what} (timing prelude): {e}"),
        };
        let mut buffers = Vec::with_capacity(l.kernel.buffers.len());
        for b in &l.kernel.buffers {
            let h = a.get_buffer(&b.name).map(|h| h.as_bytes()).unwrap_or_default();
            buffers.push(self.stream.clone_htod(h).map_err(|e| api("cuMemcpyHtoD", &e))?);
        }
        self.prelude = Some(PreparedPrelude { id: p.id(), launch, buffers });
        Ok(())
    }
}

impl Cuda {
    /// `runs` times: the prepared prelude where `prelude`, then `work` on the stream
    /// between two events; each run's device time in ns.
    fn timed_runs(
        &mut self,
        runs: u32,
        prelude: bool,
        api: &dyn Fn(&str, &dyn std::fmt::Display) -> BackendError,
        mut work: impl FnMut(&Arc<CudaStream>) -> Result<(), BackendError>,
    ) -> Result<Vec<f64>, BackendError> {
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let mut times = Vec::with_capacity(runs as usize);
        for _ in 0..runs {
            if let Some(p) = self.prelude.as_ref().filter(|_| prelude) {
                let buffers: Vec<&CudaSlice<u8>> = p.buffers.iter().collect();
                raw_launch::launch(&self.stream, &p.launch, &buffers, false).map_err(|e| api("cuLaunchKernelEx (timing prelude)", &e))?;
            }
            let start = self.stream.record_event(flags).map_err(|e| api("cuEventRecord", &e))?;
            work(&self.stream)?;
            let end = self.stream.record_event(flags).map_err(|e| api("cuEventRecord", &e))?;
            self.stream.synchronize().map_err(|e| api("cuStreamSynchronize", &e))?;
            times.push(start.elapsed_ms(&end).map_err(|e| api("cuEventElapsedTime", &e))? as f64 * 1e6);
        }
        Ok(times)
    }

    /// The dynamic shared memory of `entry` (its `<entry>__dyn_shared`, written by the
    /// generated code; read from the device and checked once per entry), allowed on the
    /// function past the 48 KiB default; a clear error where the device offers less.
    fn dynamic_shared(&mut self, l: &Launch, module: &Arc<CudaModule>, func: &CudaFunction, entry: &str) -> Result<u32, BackendError> {
        let k = l.kernel;
        let api =
            |what: &str, e: &dyn std::fmt::Display| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message: format!("{what}: {e}") };
        let key = (k.cuda.source.sha256.clone(), entry.to_string());
        let bytes = match self.dyn_shared.get(&key) {
            Some(&b) => b,
            None => {
                let b = self.read_dynamic_shared(l, module, entry)?;
                self.dyn_shared.insert(key, b);
                b
            }
        };
        func.set_attribute(cudarc::driver::sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32)
            .map_err(|e| api("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)", &e))?;
        Ok(bytes)
    }

    /// `<entry>__dyn_shared` from the module, checked against the device's opt-in
    /// maximum (static arrays included).
    fn read_dynamic_shared(&self, l: &Launch, module: &Arc<CudaModule>, entry: &str) -> Result<u32, BackendError> {
        let k = l.kernel;
        let api =
            |what: &str, e: &dyn std::fmt::Display| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message: format!("{what}: {e}") };
        let symbol = format!("{entry}__dyn_shared");
        let global = module.get_global(&symbol, &self.stream).map_err(|e| api(&format!("cuModuleGetGlobal({symbol})"), &e))?;
        let mut word = [0u8; 4];
        if global.len() != 4 {
            return Err(api(&format!("cuModuleGetGlobal({symbol})"), &format!("{} bytes, expected 4", global.len())));
        }
        self.stream.memcpy_dtoh(&global, &mut word).map_err(|e| api("cuMemcpyDtoH", &e))?;
        self.stream.synchronize().map_err(|e| api("cuStreamSynchronize", &e))?;
        let bytes = u32::from_le_bytes(word);
        let most = self.info.max_shared_bytes.unwrap_or(u32::MAX);
        let statics = k.shared_bytes_for(l.spec).saturating_sub(bytes);
        if bytes as u64 + statics as u64 > most as u64 {
            return Err(BackendError::Unsupported {
                kernel: k.name.clone(),
                variant: entry.to_string(),
                backend: "cuda",
                reason: format!("it declares {} bytes of shared memory; the device offers {most} per workgroup", bytes + statics),
            });
        }
        Ok(bytes)
    }

    /// One launch's function (its module compiled on first use), push block and grid,
    /// after its arguments are checked against the manifest.
    fn prepare(&mut self, l: &Launch, a: &Args) -> Result<Prepared, BackendError> {
        let k = l.kernel;
        check_args("cuda", l, a)?;
        let api =
            |what: &str, e: &dyn std::fmt::Display| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message: format!("{what}: {e}") };
        let entry = match k.variants.iter().find(|v| v.spec == l.spec) {
            Some(v) => v.cuda_entry.clone(),
            None => self.runtime_instance(l)?,
        };
        let module = self.module(l, &entry)?;
        let func = module.load_function(&entry).map_err(|e| api(&format!("cuModuleGetFunction({entry})"), &e))?;
        let dyn_shared = if k.cuda.dynamic_shared { self.dynamic_shared(l, &module, &func, &entry)? } else { 0 };
        let mut push = PushBlock([0; 128]);
        let bytes = push_bytes(k, a);
        push.0[..bytes.len()].copy_from_slice(&bytes);
        let cfg = LaunchConfig {
            grid_dim: (l.groups[0], l.groups[1], l.groups[2]),
            block_dim: (k.workgroup[0], k.workgroup[1], k.workgroup[2]),
            shared_mem_bytes: dyn_shared,
        };
        Ok(Prepared { func, push, has_push: !bytes.is_empty(), cfg })
    }

    /// Launches as one unit ([`Work::Launches`]): every launch's module and arguments
    /// prepared first, buffers uploaded once per name (or per launch and name), then
    /// `runs` units of all the dispatches between two events (after the prepared prelude
    /// where `prelude`), read-write buffers
    /// read back once into every launch's arguments that bind them.
    fn run_sequence(
        &mut self,
        launches: &[Launch],
        args: &mut [Args],
        runs: u32,
        scope: BufferScope,
        prelude: bool,
    ) -> Result<Vec<f64>, BackendError> {
        check_sequence("cuda", launches, args, scope)?;
        let bindings = sequence_bindings(launches, args, scope);
        let prepared = launches.iter().zip(args.iter()).map(|(l, a)| self.prepare(l, a)).collect::<Result<Vec<_>, _>>()?;
        let first = launches[0].kernel.name.clone();
        let api =
            |what: &str, e: &dyn std::fmt::Display| BackendError::Api { kernel: first.clone(), backend: "cuda", message: format!("{what}: {e}") };
        let mut slices: Vec<CudaSlice<u8>> = Vec::with_capacity(bindings.buffers.len());
        for (name, from) in &bindings.buffers {
            let h = args[*from].get_buffer(name).map(|h| h.as_bytes()).unwrap_or_default();
            slices.push(self.stream.clone_htod(h).map_err(|e| api("cuMemcpyHtoD", &e))?);
        }
        let dependent = self.dependent_launch;
        let bound: Vec<Vec<&CudaSlice<u8>>> = bindings.bound.iter().map(|b| b.iter().map(|&at| &slices[at]).collect()).collect();
        let times = self.timed_runs(runs, prelude, &api, |stream| {
            for (i, ((p, l), buffers)) in prepared.iter().zip(launches).zip(&bound).enumerate() {
                // A later launch of the unit may start while the one before drains (its
                // entry waits for that kernel's writes: `ok_grid_dependency_wait`).
                raw_launch::launch(stream, p, buffers, dependent && i > 0).map_err(|e| BackendError::Api {
                    kernel: l.kernel.name.clone(),
                    backend: "cuda",
                    message: format!("cuLaunchKernelEx: {e}"),
                })?;
            }
            Ok(())
        })?;
        for ((((name, _), slice), _), readers) in
            bindings.buffers.iter().zip(&slices).zip(&bindings.written).zip(&bindings.readers).filter(|((_, &w), _)| w)
        {
            let back = self.stream.clone_dtoh(slice).map_err(|e| api("cuMemcpyDtoH", &e))?;
            for &j in readers {
                if let Some(h) = args[j].get_buffer_mut(name) {
                    h.as_bytes_mut().copy_from_slice(&back);
                }
            }
        }
        Ok(times)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use onekernel_dsl::manifest::Manifest;
    use std::path::PathBuf;

    #[test]
    fn a_module_holds_the_launched_variants_instance_and_no_other() {
        let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
        let m: Manifest = serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap();
        let mut checked = 0;
        for k in &m.kernels {
            let src = std::fs::read_to_string(generated.join(&k.cuda.source.path)).unwrap();
            let instances = src.matches("\nOK_INSTANCE(").count();
            for v in &k.variants {
                let module = module_source(&src, &v.cuda_entry, &template_args(&v.spec));
                if instances == 0 {
                    assert_eq!(module, src, "{}: one entry, the file as it is", k.name);
                    continue;
                }
                // The file's own instance line for this variant, exactly.
                let own = format!("\nOK_INSTANCE({}, {})\n", v.cuda_entry, template_args(&v.spec));
                assert!(src.contains(&own), "{}: the generated instance spells its arguments as template_args does", v.label);
                assert_eq!(module.matches("\nOK_INSTANCE(").count(), 1, "{} {}", k.name, v.label);
                assert!(module.ends_with(&own[1..]), "{} {}", k.name, v.label);
                assert!(!module.contains("// Variant "), "{} {}: no other variant's label", k.name, v.label);
                assert!(
                    src.starts_with(module.split("\n// This module's instance.").next().unwrap()),
                    "{}: the prelude is the file's beginning",
                    k.name
                );
                checked += 1;
            }
            // A run-time instance (spec values outside the variants) the same way.
            if let Some(v) = k.variants.first().filter(|_| instances > 0) {
                let module = module_source(&src, "x__rt_1", "1u");
                assert!(module.ends_with("\nOK_INSTANCE(x__rt_1, 1u)\n") && module.matches("\nOK_INSTANCE(").count() == 1, "{}", v.label);
            }
        }
        assert!(checked >= 19, "variants with instances: the chunk kernel's 8, the combine's 4, turbo's 5, QJL's 2 (got {checked})");
    }
}
