//! The elizaOS KV-cache quantization formats (docs/formats/FORMATS.md) on the host:
//! their constant tables, and the runner of fixtures in that project's schema (§7).

pub mod codec;
#[allow(clippy::excessive_precision, clippy::approx_constant)]
pub mod constants;
pub mod fixture;
pub mod ops;
