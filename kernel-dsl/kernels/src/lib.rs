//! # onekernel-kernels
//!
//! The kernel catalogue, written once in the onekernel DSL: one module per kernel
//! family. Every kernel here registers itself; [`all`] lists them.

pub mod argmax;
pub mod attention;
pub mod cases;
pub mod copy;
pub mod kvquant;
pub mod layers;
pub mod linear;
pub mod norm;
pub mod nvfp4;
pub mod softmax;

use onekernel_dsl::catalogue::KernelEntry;

/// Every kernel of this crate (and any other linked into the program), sorted by name.
///
/// Calling this also guarantees the crate is linked, so its registrations are seen.
pub fn all() -> Vec<&'static KernelEntry> {
    onekernel_dsl::catalogue()
}
