//! Attention kernels.

pub mod decode;
