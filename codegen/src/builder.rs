//! The library API for `build.rs`: generate kernels a crate defines itself and write
//! them (with a manifest) where the crate can embed them.
//!
//! ```ignore
//! // build.rs
//! let kernels = vec![my_kernel()?];
//! onekernel_codegen::Builder::new()
//!     .kernels(kernels)
//!     .out_dir(std::env::var("OUT_DIR")?)
//!     .write()?;
//! // src/lib.rs
//! const SPV: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vulkan/my_kernel.spv"));
//! ```

use crate::error::CodegenError;
use crate::generate::{generate_all, Generated, KernelTiming};
use onekernel_dsl::Kernel;
use std::path::PathBuf;

/// Collects kernels and generates them.
#[derive(Clone, Debug, Default)]
pub struct Builder {
    kernels: Vec<Kernel>,
    out_dir: Option<PathBuf>,
    threads: Option<usize>,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Builder::default()
    }

    /// Adds one kernel.
    pub fn kernel(mut self, k: Kernel) -> Self {
        self.kernels.push(k);
        self
    }

    /// Adds several kernels: a type-axis family's instances (`#[kernel(variants(T = [f32,
    /// f16]))] fn k` makes `k()` return `k_f32` and `k_f16`), or any list.
    pub fn kernels(mut self, ks: impl IntoIterator<Item = Kernel>) -> Self {
        self.kernels.extend(ks);
        self
    }

    /// Adds every kernel registered in the catalogue of this program.
    pub fn catalogue(mut self) -> Result<Self, CodegenError> {
        for e in onekernel_dsl::catalogue() {
            self.kernels.push(e.load()?);
        }
        Ok(self)
    }

    /// Where [`Builder::write`] puts the files.
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Worker threads (default: the machine's parallelism). Output does not depend on it.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = Some(n);
        self
    }

    /// Names of the kernels added so far.
    pub fn names(&self) -> Vec<&str> {
        self.kernels.iter().map(|k| k.name.as_str()).collect()
    }

    fn thread_count(&self) -> usize {
        self.threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
    }

    /// Generates in memory.
    pub fn generate(&self) -> Result<Generated, CodegenError> {
        self.generate_with_progress(&|_, _, _| {})
    }

    /// Generates in memory, reporting each finished kernel.
    pub fn generate_with_progress(&self, progress: &(dyn Fn(usize, usize, &KernelTiming) + Sync)) -> Result<Generated, CodegenError> {
        let mut kernels = self.kernels.clone();
        kernels.sort_by(|a, b| a.name.cmp(&b.name));
        generate_all(&kernels, self.thread_count(), progress)
    }

    /// Generates and writes to the output directory (`generated` if none was set).
    pub fn write(&self) -> Result<Generated, CodegenError> {
        let g = self.generate()?;
        let dir = self.out_dir.clone().unwrap_or_else(|| PathBuf::from("generated"));
        g.write_to(&dir)?;
        Ok(g)
    }
}
