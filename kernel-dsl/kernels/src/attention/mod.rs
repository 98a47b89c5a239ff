//! Attention kernels.

pub mod decode;
pub mod decode_mma;
pub mod decode_mma_long;
