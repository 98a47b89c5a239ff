//! Every CUDA launch: `cuLaunchKernelEx` with a [`Prepared`] launch's function, grid,
//! dynamic shared memory and parameters, ordinary or, from sm_90, as a *programmatic
//! dependent launch* of the stream's previous kernel. Such a launch may begin while that
//! kernel drains; every generated CUDA entry starts with `ok_grid_dependency_wait`
//! (`griddepcontrol.wait`), which holds it until that kernel has completed and its writes
//! are visible, and does nothing for an ordinary launch, so the programmatic launch saves
//! the gap between the two kernels and nothing else changes (docs/RUNTIME.md).

use super::{Prepared, PushBlock};
use cudarc::driver::{sys, CudaSlice, CudaStream, DevicePtr};
use std::ffi::c_void;
use std::sync::Arc;

/// Launches `p` on `stream` over `buffers` (the kernel's buffers in binding order; its
/// push block follows where it has one), a programmatic dependent launch of the stream's
/// previous kernel where `programmatic`. The error is the driver's.
pub(super) fn launch(stream: &Arc<CudaStream>, p: &Prepared, buffers: &[&CudaSlice<u8>], programmatic: bool) -> Result<(), String> {
    let mut guards = Vec::with_capacity(buffers.len());
    let mut ptrs: Vec<sys::CUdeviceptr> = Vec::with_capacity(buffers.len());
    for b in buffers {
        let (ptr, guard) = b.device_ptr(stream);
        ptrs.push(ptr);
        guards.push(guard);
    }
    let mut push: PushBlock = p.push;
    let mut params: Vec<*mut c_void> = ptrs.iter_mut().map(|x| x as *mut sys::CUdeviceptr as *mut c_void).collect();
    if p.has_push {
        params.push(&mut push as *mut PushBlock as *mut c_void);
    }
    // SAFETY: all zeros is a valid attribute (an id and a union of plain integers).
    let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
    attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    attr.value.programmaticStreamSerializationAllowed = 1;
    let (grid, block) = (p.cfg.grid_dim, p.cfg.block_dim);
    let config = sys::CUlaunchConfig {
        gridDimX: grid.0,
        gridDimY: grid.1,
        gridDimZ: grid.2,
        blockDimX: block.0,
        blockDimY: block.1,
        blockDimZ: block.2,
        sharedMemBytes: p.cfg.shared_mem_bytes,
        hStream: stream.cu_stream(),
        attrs: if programmatic { &mut attr } else { std::ptr::null_mut() },
        numAttrs: programmatic as u32,
    };
    // SAFETY: the parameters are the generated signature's (buffers in binding order,
    // then the push struct; the caller checked them against the manifest), and they and
    // the device pointers' guards outlive the call.
    let result = unsafe { sys::cuLaunchKernelEx(&config, p.func.cu_function(), params.as_mut_ptr(), std::ptr::null_mut()) };
    drop(guards);
    result.result().map_err(|e| e.to_string())
}
