//! Code-generation errors. Each names the kernel and, where it applies, the backend.

use onekernel_dsl::validate::ValidationError;
use std::path::PathBuf;
use thiserror::Error;

/// Why generation failed.
#[derive(Debug, Error)]
pub enum CodegenError {
    /// The kernel's IR does not validate.
    #[error("kernel `{kernel}` is invalid:\n{}", .errors.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// Kernel name.
        kernel: String,
        /// Validation errors.
        errors: Vec<ValidationError>,
    },
    /// A template failed to render (a bug in a template).
    #[error("kernel `{kernel}` ({backend}): template `{template}` failed: {message}")]
    Template {
        /// Kernel name.
        kernel: String,
        /// Backend.
        backend: &'static str,
        /// Template name.
        template: String,
        /// Tera's message chain.
        message: String,
    },
    /// shaderc rejected the generated GLSL.
    #[error("kernel `{kernel}` (vulkan): the generated GLSL does not compile:\n{message}")]
    Glsl {
        /// Kernel name.
        kernel: String,
        /// shaderc's diagnostics.
        message: String,
    },
    /// spirv-val rejected the module.
    #[error("kernel `{kernel}` (vulkan): SPIR-V fails validation (spirv-val, {target}): {message}")]
    SpirvInvalid {
        /// Kernel name.
        kernel: String,
        /// Target environment.
        target: &'static str,
        /// The validator's message.
        message: String,
    },
    /// naga's SPIR-V reader or validator rejected a specialized variant that spirv-val
    /// accepted, or the variant could not be specialized.
    #[error("kernel `{kernel}` (vulkan, variant {variant}): {message}")]
    NagaRejected {
        /// Kernel name.
        kernel: String,
        /// The variant's label and the device facts it was specialized with.
        variant: String,
        /// naga's (or the specializer's) message.
        message: String,
    },
    /// The compiled module's interface differs from what the generator intended.
    #[error("kernel `{kernel}` (vulkan): reflection disagrees with the generator: {message}")]
    Reflection {
        /// Kernel name.
        kernel: String,
        /// What differs.
        message: String,
    },
    /// Two kernels given to one generation have the same name (their files would
    /// overwrite each other).
    #[error("two kernels are named `{name}`; each kernel of one generation needs its own name")]
    DuplicateKernel {
        /// The name.
        name: String,
    },
    /// A requested kernel is not in the catalogue.
    #[error("no kernel named `{name}`; known kernels: {}", .known.join(", "))]
    UnknownKernel {
        /// The requested name.
        name: String,
        /// The catalogue's names.
        known: Vec<String>,
    },
    /// A registered kernel failed to load.
    #[error(transparent)]
    Catalogue(#[from] onekernel_dsl::catalogue::CatalogueError),
    /// Writing or reading generated files failed.
    #[error("cannot {action} `{}`: {source}", .path.display())]
    Io {
        /// What was attempted.
        action: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}
