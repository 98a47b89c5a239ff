//! # onekernel-runtime
//!
//! Runs generated kernels and proves them against the reference interpreter. One
//! [`Backend`] trait (name, device, launch, and one timed primitive, [`Backend::time`])
//! with three implementations: [`cpu`], the reference interpreter whose results define
//! what every GPU backend must reproduce bit for bit; [`vulkan`] (ash); [`cuda`] (cudarc
//! and NVRTC). [`validate`] runs every kernel, variant and validation case on a backend
//! and compares it with the interpreter.
//!
//! The applications built on it (decode attention, KV-cache quantization, external
//! fixtures) live in `onekernel-ops`; benchmark harnesses compose [`TimedUnit`]s.

pub mod args;
pub mod backend;
pub mod buffer;
pub mod cpu;
pub mod cuda;
pub mod validate;
pub mod vulkan;

pub use args::{ArgValue, Args};
pub use backend::{Backend, BackendError, BufferScope, DeviceInfo, Launch, LaunchStats, Prelude, TimedUnit, Work};
pub use buffer::HostBuffer;
