//! A downstream crate that defines its own kernels (`src/kernels.rs`: `scale_in_place`,
//! and the type-axis family `add_bias`), generates them from `build.rs`, embeds what
//! onekernel generated (the manifest and every backend's artifact, ready to hand to a
//! runtime), and validates them against the interpreter on the backends present
//! (`tests/validate.rs`).

pub mod kernels;

/// The directory `build.rs` generated into (manifest and artifacts), for a runtime that
/// loads artifacts from files.
pub const GENERATED_DIR: &str = concat!(env!("OUT_DIR"), "/onekernel");

/// The manifest of this crate's kernels (`docs/MANIFEST.md` in onekernel).
pub const MANIFEST: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/manifest.json"));

/// SPIR-V of `scale_in_place` (Vulkan 1.1), validated at build time.
pub const SCALE_IN_PLACE_SPIRV: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/onekernel/vulkan/scale_in_place.spv"));

/// CUDA C++ source of `scale_in_place`, for NVRTC.
pub const SCALE_IN_PLACE_CUDA: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/cuda/scale_in_place.cu"));

/// Metal Shading Language source of `scale_in_place`.
pub const SCALE_IN_PLACE_METAL: &str = include_str!(concat!(env!("OUT_DIR"), "/onekernel/metal/scale_in_place.metal"));
