//! The schema of `manifest.json`, the kernel contract: written by `onekernel-codegen`,
//! read by `onekernel-runtime` (documented in `docs/MANIFEST.md`). Field order is fixed
//! by these structs, so serialization is byte-stable.

use crate::ir::{Access, Determinism, Expr, SourceInfo};
use crate::types::{Literal, Scalar, StorageType};
use serde::{Deserialize, Serialize};

mod check;
pub use check::ManifestError;

/// Version of the manifest schema.
pub const SCHEMA_VERSION: u32 = 1;

/// The whole manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`SCHEMA_VERSION`].
    pub schema: u32,
    /// `onekernel-codegen <version>`.
    pub generator: String,
    /// Every kernel, sorted by name.
    pub kernels: Vec<KernelManifest>,
}

/// One storage buffer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BufferEntry {
    /// Parameter name (as spelled in generated code).
    pub name: String,
    /// Vulkan binding in set 0; CUDA argument index; Metal `[[buffer(i)]]`.
    pub binding: u32,
    /// Element type.
    pub elem: StorageType,
    /// Read-only or read-write.
    pub access: Access,
    /// Declared minimum length in elements, as DSL text (`(num_groups().x * n_cols)`).
    pub len_text: Option<String>,
    /// The same, as an IR expression whose parameters index [`KernelManifest::param_names`].
    pub len: Option<Expr>,
}

/// One push constant (a 32-bit scalar).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PushEntry {
    /// Name.
    pub name: String,
    /// Type.
    #[serde(rename = "type")]
    pub ty: Scalar,
    /// Byte offset in the push block / CUDA argument struct / Metal argument struct.
    pub offset: u32,
}

/// One specialization constant or variant axis.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SpecEntry {
    /// Vulkan `constant_id`, Metal `function_constant` index, CUDA template position.
    pub id: u32,
    /// Name.
    pub name: String,
    /// Type.
    #[serde(rename = "type")]
    pub ty: Scalar,
    /// Default value.
    pub default: Literal,
    /// For a variant axis: the values that are generated and validated.
    pub values: Option<Vec<Literal>>,
}

/// One variant: values for every spec constant, and its CUDA entry point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VariantEntry {
    /// `axis = value, …`.
    pub label: String,
    /// Value of every spec constant, in id order.
    pub spec: Vec<(String, Literal)>,
    /// The `extern "C"` CUDA entry point of this instance.
    pub cuda_entry: String,
    /// Workgroup shared memory of this variant in bytes (arrays sized by variant axes
    /// differ between variants; ≤ [`KernelManifest::shared_bytes`]).
    #[serde(default)]
    pub shared_bytes: u32,
}

/// A generated file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Artifact {
    /// Path relative to the generated directory.
    pub path: String,
    /// SHA-256 of the file, hex.
    pub sha256: String,
}

/// CUDA artifacts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CudaEntry {
    /// The `.cu` file.
    pub source: Artifact,
    /// Entry point without spec constants, if the kernel has none.
    pub entry: Option<String>,
    /// The template (`<name>_impl`) to instantiate for other spec values.
    pub template: Option<String>,
    /// NVRTC / nvcc options the contract requires.
    pub options: Vec<String>,
    /// Whether some shared arrays live in dynamic shared memory (the kernel declares
    /// more than CUDA's 48 KiB of static shared memory): each entry `E` then exports
    /// `E__dyn_shared`, a `__device__ unsigned int` with the bytes its launch must pass.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dynamic_shared: bool,
}

/// The register tiles of a kernel (docs/DSL.md, "Register tiles"): the product shape,
/// the element types and the group that holds a tile. CUDA lowers them to `mma.sync`
/// (sm_80 and newer), Vulkan to `VK_KHR_cooperative_matrix` with subgroups of `group`
/// invocations, Metal to `simdgroup_matrix`; a runtime whose device lacks them reports
/// the kernel unsupported before launch.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileFeatures {
    /// M × N × K of one `tile_mma`.
    pub shape: [u32; 3],
    /// Element type of the A and B operands.
    pub operands: Scalar16,
    /// Element type of the accumulators.
    pub accumulators: Scalar,
    /// Invocations that hold a tile together (a warp, a subgroup, a SIMD group).
    pub group: u32,
}

/// The 16-bit operand types a tile can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scalar16 {
    /// IEEE binary16.
    F16,
}

impl TileFeatures {
    /// What every kernel with tiles needs: 16 × 16 × 16 products of f16 operands into
    /// f32 accumulators, held by groups of 32 invocations.
    pub fn standard() -> Self {
        TileFeatures { shape: [crate::ir::TILE_DIM; 3], operands: Scalar16::F16, accumulators: Scalar::F32, group: 32 }
    }
}

/// Vulkan artifacts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VulkanEntry {
    /// The GLSL source.
    pub glsl: Artifact,
    /// The SPIR-V module.
    pub spirv: Artifact,
    /// Entry point name.
    pub entry: String,
    /// Target environment of compilation and validation.
    pub target_env: String,
    /// `constant_id` of the bool `ok_native_fma` switch, when the kernel uses `fma`:
    /// true where the device's `fma` is fused, false selects the exact emulation.
    pub fma_spec_id: Option<u32>,
    /// `constant_id` of the bool `ok_f16_unpack_exact` switch: true where the driver's
    /// `unpackHalf2x16` widens subnormal halves exactly, false builds them by hand.
    #[serde(default)]
    pub f16_spec_id: Option<u32>,
    /// The module's interface as reflected (cross-checked at generation).
    pub reflection: Reflection,
}

/// Metal artifacts and launch plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetalEntry {
    /// The `.metal` file.
    pub source: Artifact,
    /// Kernel function name.
    pub entry: String,
    /// `[[buffer(i)]]` index of the push-constant struct, if any.
    pub push_buffer_index: Option<u32>,
    /// `MTLCompileOptions` the contract requires.
    pub compile_options: Vec<String>,
}

/// Everything about one kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelManifest {
    /// Kernel name.
    pub name: String,
    /// Its doc comment.
    pub doc: String,
    /// Determinism class.
    pub class: Determinism,
    /// Where it was written, and the hash of its DSL source.
    pub source: SourceInfo,
    /// Workgroup size.
    pub workgroup: [u32; 3],
    /// Every parameter's name in declaration order (what length expressions index).
    pub param_names: Vec<String>,
    /// How to choose the dispatch size.
    pub dispatch: String,
    /// Storage buffers, in binding order.
    pub buffers: Vec<BufferEntry>,
    /// Push constants.
    pub push_constants: Vec<PushEntry>,
    /// Size of the push block in bytes (≤ 128).
    pub push_constant_bytes: u32,
    /// Specialization constants and variant axes.
    pub spec_constants: Vec<SpecEntry>,
    /// Every variant the catalogue builds and validates.
    pub variants: Vec<VariantEntry>,
    /// Workgroup shared memory in bytes: declared arrays plus reduction scratch (the
    /// largest variant's).
    pub shared_bytes: u32,
    /// Register tiles the kernel uses: what a device must offer to run it (absent for
    /// kernels without tiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiles: Option<TileFeatures>,
    /// The kernel has a `last_arrival`: its workgroups finish a result together, so the
    /// validator also runs the reference with the workgroups in reverse order, which must
    /// give the same bits (docs/DSL.md, "Arrivals").
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub arrivals: bool,
    /// Library functions the kernel carries.
    pub functions: Vec<String>,
    /// CUDA.
    pub cuda: CudaEntry,
    /// Vulkan.
    pub vulkan: VulkanEntry,
    /// Metal.
    pub metal: MetalEntry,
}

/// A SPIR-V module's interface as reflected at generation time.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reflection {
    /// `(set, binding)` of every storage buffer, sorted.
    pub bindings: Vec<(u32, u32)>,
    /// Byte offsets of the push-constant block's members, in member order.
    pub push_offsets: Vec<u32>,
    /// Size of the push-constant block in bytes.
    pub push_size: u32,
    /// Every `SpecId`, sorted.
    pub spec_ids: Vec<u32>,
    /// `LocalSize` of the entry point.
    pub local_size: [u32; 3],
}

impl Manifest {
    /// Looks a kernel up by name.
    pub fn kernel(&self, name: &str) -> Option<&KernelManifest> {
        self.kernels.iter().find(|k| k.name == name)
    }
}

impl KernelManifest {
    /// Whether the kernel declares the spec constant (a variant axis or a `#[spec]`
    /// parameter) `name`: the runtime sets an axis only where the generated kernel has it.
    pub fn has_spec_constant(&self, name: &str) -> bool {
        self.spec_constants.iter().any(|s| s.name == name)
    }

    /// The first variant whose spec constants include every `(name, value)` of `axes`
    /// (the first variant when `axes` is empty).
    pub fn variant_with(&self, axes: &[(&str, Literal)]) -> Option<&VariantEntry> {
        self.variants.iter().find(|v| axes.iter().all(|(n, want)| v.spec.iter().any(|(name, val)| name == n && val == want)))
    }

    /// Shared memory in bytes of a launch with spec values `spec`: that of the variant
    /// with the same variant-axis values, else the largest.
    pub fn shared_bytes_for(&self, spec: &[(String, Literal)]) -> u32 {
        let axes: Vec<&str> = self.spec_constants.iter().filter(|s| s.values.is_some()).map(|s| s.name.as_str()).collect();
        let value = |list: &[(String, Literal)], n: &str| list.iter().find(|(name, _)| name == n).map(|(_, v)| *v);
        self.variants
            .iter()
            .find(|v| v.shared_bytes > 0 && axes.iter().all(|a| value(&v.spec, a) == value(spec, a)))
            .map_or(self.shared_bytes, |v| v.shared_bytes)
    }
}
