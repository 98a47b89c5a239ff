//! `generated/manifest.json`: the kernel contract the runtime launches from. Its schema
//! is documented in `docs/MANIFEST.md`; field order is fixed by these structs and kernels
//! are sorted by name, so the file is byte-identical across runs.

use crate::spirv::Reflection;
use crate::templates::Instance;
use onekernel_dsl::ir::{Access, Determinism, Kernel, ParamKind, SourceInfo};
use onekernel_dsl::types::{Literal, Scalar, StorageType};
use serde::{Deserialize, Serialize};

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
    /// Workgroup shared memory in bytes: declared arrays plus reduction scratch.
    pub shared_bytes: u32,
    /// Library functions the kernel carries.
    pub functions: Vec<String>,
    /// CUDA.
    pub cuda: CudaEntry,
    /// Vulkan.
    pub vulkan: VulkanEntry,
    /// Metal.
    pub metal: MetalEntry,
}

/// NVRTC options every CUDA kernel is compiled with.
pub const CUDA_OPTIONS: &[&str] = &["--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-std=c++17"];

/// Interface entries shared by every backend.
pub fn interface(k: &Kernel) -> (Vec<BufferEntry>, Vec<PushEntry>, Vec<SpecEntry>) {
    let (mut buffers, mut push, mut specs) = (Vec::new(), Vec::new(), Vec::new());
    for p in &k.params {
        let name = crate::print::ident(&p.name);
        match &p.kind {
            ParamKind::Buffer { elem, access } => buffers.push(BufferEntry { name, binding: buffers.len() as u32, elem: *elem, access: *access }),
            ParamKind::Push { ty } => push.push(PushEntry { name, ty: *ty, offset: 4 * push.len() as u32 }),
            ParamKind::Spec { ty, default, values } => specs.push(SpecEntry {
                id: specs.len() as u32,
                name,
                ty: *ty,
                default: default.unwrap_or(Literal::U32(0)),
                values: values.clone(),
            }),
        }
    }
    (buffers, push, specs)
}

/// The variants of a kernel (one per combination of variant-axis values).
pub fn variants(instances: &[Instance], k: &Kernel) -> Vec<VariantEntry> {
    if instances.is_empty() {
        return vec![VariantEntry { label: "defaults".into(), spec: vec![], cuda_entry: k.name.clone() }];
    }
    instances
        .iter()
        .map(|i| VariantEntry { label: i.label.clone(), spec: i.values.clone(), cuda_entry: i.entry.clone() })
        .collect()
}
