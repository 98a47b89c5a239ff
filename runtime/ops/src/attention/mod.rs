//! Attention as users run it: a decode problem (queries, a paged or contiguous cache in
//! any of seven formats, options) executed as `attn_decode_chunk` or `attn_decode_wide`
//! and `attn_decode_combine` on any backend; prefill in its exact mode (the decode bits
//! of every query); the FP8 cache write; an independent float64 reference, the batching
//! helpers, and the determinism grid.

pub mod batch;
pub mod encode;
pub mod format;
pub mod grid;
pub mod prefill;
pub mod problem;
pub mod reference;

pub use format::KvFormat;
pub use prefill::{PrefillProblem, RowLayout, TiledBlocks};
pub use problem::{AttentionError, DecodeProblem, Split, DETERMINISTIC_CHUNK};
