//! # onekernel-dsl
//!
//! The core of onekernel: the kernel IR ([`ir`]), its types ([`types`]) and type rules
//! ([`typing`]), the validator ([`validate`]), the portable math library ([`mathlib`])
//! and the catalogue that `#[kernel]` functions register into ([`catalogue()`]).
//!
//! Kernels are written with the `#[kernel]` attribute of the `onekernel-macros` crate,
//! which parses the function body at compile time, lowers it to this IR, validates it
//! and embeds the result; see that crate and the repository README for the DSL.

pub mod cases;
pub mod catalogue;
pub mod half;
pub mod ir;
pub mod manifest;
pub mod mathlib;
pub mod prelude;
pub mod shapes;
pub mod types;
pub mod typing;
pub mod validate;
pub mod visit;

pub use catalogue::{catalogue, find, KernelEntry};
pub use ir::Kernel;

/// Items the `#[kernel]` macro's expansion refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use serde_json;
}
