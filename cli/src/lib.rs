//! # onekernel-cli
//!
//! The `onekernel` command (`src/main.rs`) and, as a library, the benchmark
//! [`harness`] it measures with: how a timed unit is prepared (the L2 flush as a
//! prelude launch, warm-ups, medians) on top of the runtime's one timed primitive.

pub mod harness;
