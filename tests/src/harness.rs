//! What the integration tests share: the repository root, the generated manifest, and
//! the backends present (with a visible line for each one that is not).

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::cuda::Cuda;
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::Backend;
use std::path::PathBuf;

/// The repository root: `ONEKERNEL_ROOT` where set (test binaries run on another
/// machine than the one that built them), else the checkout they were built from.
pub fn root() -> PathBuf {
    match std::env::var_os("ONEKERNEL_ROOT") {
        Some(r) => PathBuf::from(r),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// `generated/manifest.json`.
pub fn manifest() -> Manifest {
    serde_json::from_slice(&std::fs::read(root().join("generated/manifest.json")).expect("generated/manifest.json")).expect("a valid manifest")
}

/// The reference interpreter with every catalogue kernel.
pub fn cpu() -> CpuBackend {
    CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().expect("catalogue kernel")))
}

/// The Vulkan device, or `None` after a SKIPPED line where there is none (never in CI,
/// which has lavapipe).
pub fn vulkan_or_skip() -> Option<Vulkan> {
    match Vulkan::new() {
        Ok(vk) => Some(vk),
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {e}");
            println!("SKIPPED on Vulkan: {e}");
            None
        }
    }
}

/// The GPU backends present: Vulkan (lavapipe, required in CI) and CUDA (the GPU
/// machine); each absent one prints a SKIPPED line.
pub fn gpu_backends() -> Vec<Box<dyn Backend>> {
    let mut v: Vec<Box<dyn Backend>> = Vec::new();
    if let Some(vk) = vulkan_or_skip() {
        v.push(Box::new(vk));
    }
    match Cuda::new() {
        Ok(c) => v.push(Box::new(c)),
        Err(e) => println!("SKIPPED on CUDA (no NVIDIA GPU here): {e}"),
    }
    v
}

/// The interpreter first, then [`gpu_backends`].
pub fn all_backends() -> Vec<Box<dyn Backend>> {
    let mut v: Vec<Box<dyn Backend>> = vec![Box::new(cpu())];
    v.extend(gpu_backends());
    v
}
