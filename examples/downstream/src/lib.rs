//! A downstream crate that defines its own kernel (`scale_in_place`, in `build.rs`)
//! and embeds what onekernel generated for it: the manifest and every backend's
//! artifact, ready to hand to a runtime.

/// The manifest of this crate's kernels (`docs/MANIFEST.md` in onekernel).
pub const MANIFEST: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/manifest.json"));

/// SPIR-V of `scale_in_place` (Vulkan 1.1), validated at build time.
pub const SCALE_IN_PLACE_SPIRV: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/onekernel/vulkan/scale_in_place.spv"));

/// CUDA C++ source of `scale_in_place`, for NVRTC.
pub const SCALE_IN_PLACE_CUDA: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/cuda/scale_in_place.cu"));

/// Metal Shading Language source of `scale_in_place`.
pub const SCALE_IN_PLACE_METAL: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/metal/scale_in_place.metal"));
