//! The kernel catalogue: every `#[kernel]` function registers one [`KernelEntry`]
//! (through `inventory`), and the code generator, the runtime and the tests enumerate
//! them from here, sorted by name so that every listing is deterministic.

use crate::ir::Kernel;
use crate::validate::ValidationError;
use thiserror::Error;

/// One registered kernel.
#[derive(Debug)]
pub struct KernelEntry {
    /// The kernel's name (the function's name, plus `_<type>` for a type-axis instance).
    pub name: &'static str,
    /// The DSL function's name: the family its type instances share.
    pub family: &'static str,
    /// The crate module path it was written in (e.g. `onekernel_kernels::norm`).
    pub module: &'static str,
    /// The source file, as `file!()` names it.
    pub file: &'static str,
    /// The IR, validated at compile time, as JSON.
    pub ir_json: &'static str,
}

inventory::collect!(KernelEntry);

/// Why a registered kernel could not be loaded.
#[derive(Debug, Error)]
pub enum CatalogueError {
    /// The embedded IR does not deserialize (a version mismatch between the macro and
    /// this crate).
    #[error("kernel `{name}`: embedded IR does not deserialize: {source}")]
    Decode {
        /// Kernel name.
        name: String,
        /// The serde error.
        source: serde_json::Error,
    },
    /// The IR fails validation.
    #[error("kernel `{name}` is invalid:\n{}", .errors.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    Invalid {
        /// Kernel name.
        name: String,
        /// Every error.
        errors: Vec<ValidationError>,
    },
}

impl KernelEntry {
    /// Deserializes and re-validates the kernel.
    pub fn load(&self) -> Result<Kernel, CatalogueError> {
        let mut k: Kernel = serde_json::from_str(self.ir_json).map_err(|source| CatalogueError::Decode { name: self.name.into(), source })?;
        k.source.file = self.file.to_string();
        crate::validate::validate(&k).map_err(|errors| CatalogueError::Invalid { name: self.name.into(), errors })?;
        Ok(k)
    }
}

/// Every registered kernel linked into this program, sorted by name.
pub fn catalogue() -> Vec<&'static KernelEntry> {
    let mut v: Vec<_> = inventory::iter::<KernelEntry>.into_iter().collect();
    v.sort_by_key(|e| (e.name, e.module));
    v
}

/// Looks a registered kernel up by name.
pub fn find(name: &str) -> Option<&'static KernelEntry> {
    inventory::iter::<KernelEntry>.into_iter().find(|e| e.name == name)
}
