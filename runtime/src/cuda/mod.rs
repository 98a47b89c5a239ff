//! The CUDA backend (cudarc, driver and NVRTC loaded at run time). It compiles the
//! generated `.cu` with NVRTC and the contract's options (`--fmad=false --ftz=false`,
//! precise division and square root) for the device's architecture, caches modules,
//! launches the variant's `extern "C"` entry and times it with events. Without a CUDA
//! driver the backend reports itself unavailable; it never panics.

use crate::args::{ArgValue, Args};
use crate::backend::{check_args, push_bytes, Backend, BackendError, DeviceInfo, Launch, LaunchStats};
use cudarc::driver::{CudaContext, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};
use onekernel_dsl::ir::Access;
use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// Push constants as one by-value kernel argument (the `ok_push_<k>` struct): the
/// driver copies exactly the parameter's size from this block.
#[repr(C)]
#[derive(Clone, Copy)]
struct PushBlock([u8; 128]);

// SAFETY: plain bytes, valid for any bit pattern, passed by value.
unsafe impl DeviceRepr for PushBlock {}

/// A CUDA device.
pub struct Cuda {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: &'static str,
    modules: HashMap<String, Arc<CudaModule>>,
    info: DeviceInfo,
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
        let arch = arch(major, minor);
        let info = DeviceInfo {
            backend: "cuda".into(),
            device: name,
            driver: format!("CUDA driver, compute capability {major}.{minor}, NVRTC -arch={arch}"),
            subgroup_size: Some(32),
            denormals: "preserved (-ftz=false)".into(),
            fma: "native fmaf (fused)".into(),
        };
        Ok(Cuda { ctx, stream, arch, modules: HashMap::new(), info })
    }

    fn module(&mut self, l: &Launch) -> Result<Arc<CudaModule>, BackendError> {
        let k = l.kernel;
        if let Some(m) = self.modules.get(&k.cuda.source.sha256) {
            return Ok(m.clone());
        }
        let path = l.artifacts.join(&k.cuda.source.path);
        let src = std::fs::read_to_string(&path).map_err(|source| BackendError::Artifact { kernel: k.name.clone(), path: path.display().to_string(), source })?;
        let opts = CompileOptions {
            ftz: Some(false),
            prec_div: Some(true),
            prec_sqrt: Some(true),
            fmad: Some(false),
            options: vec!["-std=c++17".into()],
            arch: Some(self.arch),
            name: Some(format!("{}.cu", k.name)),
            ..Default::default()
        };
        let api = |message: String| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message };
        let ptx = catch_unwind(AssertUnwindSafe(|| compile_ptx_with_opts(&src, opts)))
            .map_err(|_| api("NVRTC could not be loaded".into()))?
            .map_err(|e| api(format!("NVRTC: {e:?}")))?;
        let m = self.ctx.load_module(ptx).map_err(|e| api(format!("cuModuleLoadData: {e}")))?;
        self.modules.insert(k.cuda.source.sha256.clone(), m.clone());
        Ok(m)
    }
}

impl Backend for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn launch(&mut self, l: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError> {
        let k = l.kernel;
        check_args("cuda", l, args)?;
        let api = |what: &str, e: &dyn std::fmt::Display| BackendError::Api { kernel: k.name.clone(), backend: "cuda", message: format!("{what}: {e}") };
        let entry = k
            .variants
            .iter()
            .find(|v| v.spec == l.spec)
            .map(|v| v.cuda_entry.clone())
            .ok_or_else(|| BackendError::Arguments {
                kernel: k.name.clone(),
                backend: "cuda",
                message: "these spec values are not one of the manifest's variants (no CUDA instantiation)".into(),
            })?;
        let module = self.module(l)?;
        let func = module.load_function(&entry).map_err(|e| api(&format!("cuModuleGetFunction({entry})"), &e))?;
        let mut slices: Vec<CudaSlice<u8>> = Vec::new();
        for b in &k.buffers {
            let Some(ArgValue::Buffer(h)) = args.get(&b.name) else { continue };
            slices.push(self.stream.clone_htod(h.as_bytes()).map_err(|e| api("cuMemcpyHtoD", &e))?);
        }
        let mut push = PushBlock([0; 128]);
        let bytes = push_bytes(k, args);
        push.0[..bytes.len()].copy_from_slice(&bytes);
        let cfg = LaunchConfig {
            grid_dim: (l.groups[0], l.groups[1], l.groups[2]),
            block_dim: (k.workgroup[0], k.workgroup[1], k.workgroup[2]),
            shared_mem_bytes: 0,
        };
        let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
        let start = self.stream.record_event(flags).map_err(|e| api("cuEventRecord", &e))?;
        {
            let mut b = self.stream.launch_builder(&func);
            for s in &slices {
                b.arg(s);
            }
            if !bytes.is_empty() {
                b.arg(&push);
            }
            // SAFETY: the argument list matches the generated signature (buffers in
            // binding order, then the push struct), checked against the manifest above.
            unsafe { b.launch(cfg) }.map_err(|e| api("cuLaunchKernel", &e))?;
        }
        let end = self.stream.record_event(flags).map_err(|e| api("cuEventRecord", &e))?;
        self.stream.synchronize().map_err(|e| api("cuStreamSynchronize", &e))?;
        let ms = start.elapsed_ms(&end).map_err(|e| api("cuEventElapsedTime", &e))?;
        for (b, s) in k.buffers.iter().zip(&slices) {
            if b.access != Access::ReadWrite {
                continue;
            }
            let back = self.stream.clone_dtoh(s).map_err(|e| api("cuMemcpyDtoH", &e))?;
            if let Some(h) = args.get_buffer_mut(&b.name) {
                h.as_bytes_mut().copy_from_slice(&back);
            }
        }
        Ok(LaunchStats { device_ns: Some(ms as f64 * 1e6) })
    }
}
