//! Attention kernels.

pub mod decode;
pub mod decode_mma;
pub mod prefill_mma;
pub mod wide;
