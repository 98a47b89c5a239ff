//! KV-cache quantization kernels of the elizaOS inference work (docs/formats/
//! FORMATS.md): TurboQuant score kernels, QJL, PolarQuant and fused QJL-K attention.
//!
//! Every block format here is a byte image; kernels take it as little-endian 32-bit
//! words and read bytes with shifts, since blocks (14, 18, 34, 52, 66, 72, 82 bytes) do
//! not align to words. Format tables (codebooks, sign vectors) are input buffers filled
//! by the host from `onekernel_ops::kvquant::constants`. Rows are 128 elements.

pub mod encode;
pub mod fused;
pub mod polar;
pub mod qjl;
pub mod turbo;
