//! Programmatic dependent launch (sm_90 and later): a kernel launched with programmatic
//! stream serialization may begin while the stream's previous kernel drains. Every
//! generated CUDA entry starts with `ok_grid_dependency_wait` (`griddepcontrol.wait`),
//! which holds it until that kernel has completed and its writes are visible, and does
//! nothing for a kernel launched the ordinary way; so the launch saves the gap between
//! the two kernels and nothing else changes (docs/RUNTIME.md).

use super::PushBlock;
use cudarc::driver::{sys, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig};
use std::ffi::c_void;
use std::sync::Arc;

/// Launches `func` on `stream` over the buffers `slices[bound[i]]` (and `push`, the push
/// block, where the kernel has one) as a programmatic dependent launch of the stream's
/// previous kernel. The error is the driver's.
pub(super) fn launch(stream: &Arc<CudaStream>, func: &CudaFunction, cfg: &LaunchConfig, push: Option<&PushBlock>, slices: &[CudaSlice<u8>], bound: &[usize]) -> Result<(), String> {
    let mut guards = Vec::with_capacity(bound.len());
    let mut ptrs: Vec<sys::CUdeviceptr> = Vec::with_capacity(bound.len());
    for &at in bound {
        let (ptr, guard) = slices[at].device_ptr(stream);
        ptrs.push(ptr);
        guards.push(guard);
    }
    let mut push = push.copied();
    let mut params: Vec<*mut c_void> = ptrs.iter_mut().map(|x| x as *mut sys::CUdeviceptr as *mut c_void).collect();
    if let Some(p) = push.as_mut() {
        params.push(p as *mut PushBlock as *mut c_void);
    }
    // SAFETY: all zeros is a valid attribute (an id and a union of plain integers).
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let config = sys::CUlaunchConfig {
        gridDimX: cfg.grid_dim.0,
        gridDimY: cfg.grid_dim.1,
        gridDimZ: cfg.grid_dim.2,
        blockDimX: cfg.block_dim.0,
        blockDimY: cfg.block_dim.1,
        blockDimZ: cfg.block_dim.2,
        sharedMemBytes: cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: &mut attr,
        numAttrs: 1,
    };
    // SAFETY: the parameters are the generated signature's (buffers in binding order,
    // then the push struct, as for every launch: the caller checked them against the
    // manifest), and they and the device pointers' guards outlive the call.
    let result = unsafe { sys::cuLaunchKernelEx(&config, func.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) };
    drop(guards);
    result.result().map_err(|e| e.to_string())
}
