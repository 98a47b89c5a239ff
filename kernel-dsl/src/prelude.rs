//! What a program that uses kernels imports: the IR type, the catalogue, the
//! determinism classes. Kernel sources themselves import the attribute with
//! `use onekernel_macros::kernel;` (a proc-macro crate cannot be re-exported from the
//! crate it depends on).

pub use crate::catalogue::{catalogue, find, KernelEntry};
pub use crate::ir::{Determinism, Kernel};
pub use crate::types::{Scalar, StorageType};
