//! # onekernel-ops
//!
//! The applications of the kernel catalogue, on any backend of `onekernel-runtime`,
//! all in one shape: each call takes a [`Device`] (backend, manifest, artifacts), checks
//! its inputs before anything is launched, and returns host data.
//!
//! * [`attention`]: paged decode attention (chunk + combine kernels, five KV formats,
//!   deterministic and fast modes, tensor cores), its float64 reference and the
//!   determinism grid.
//! * [`kvquant`]: the KV-cache quantization formats (TBQ, QJL, Polar): encoders, score
//!   kernels, fused attention, their host codecs.
//! * [`layers`]: per-layer building blocks of large models (RoPE with an f32 cache, MoE
//!   routing, Sinkhorn-Knopp), with float64 references.
//! * [`nvfp4`]: NVFP4 quantization with a runtime global scale, dequantization, GEMV,
//!   and the same arithmetic on the host.
//! * [`linear`]: linear attention (gated delta net, short convolution, selective scan)
//!   with the recurrent state in a slot cache, and their float64 references.
//! * [`fixture`], [`kvquant::fixture`] and [`linear::fixture`]: external fixture files run against their
//!   float64 references.

pub mod attention;
mod call;
mod device;
pub mod fixture;
mod json;
pub mod kvquant;
pub mod layers;
pub mod linear;
pub mod nvfp4;

pub use call::CallError;
pub use device::{Device, Timing};
