//! Decode attention as users run it: a problem (queries, a paged or contiguous cache in
//! any of five formats, options) executed as the `attn_decode_chunk` +
//! `attn_decode_combine` kernels on any backend, an independent float64 reference, the
//! batching helpers, and the determinism grid.

pub mod batch;
pub mod encode;
pub mod format;
pub mod grid;
pub mod problem;
pub mod reference;

pub use format::KvFormat;
pub use problem::{AttentionError, DecodeProblem, Split, DETERMINISTIC_CHUNK};
