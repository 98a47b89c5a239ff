//! # onekernel-runtime
//!
//! Runs generated kernels and proves them against the reference interpreter. One
//! [`Backend`] trait (name, device, launch, and one timed primitive, [`Backend::time`])
//! with four implementations: [`cpu`], the reference interpreter whose results define
//! what every other backend must reproduce bit for bit; [`vulkan`] (ash); [`cuda`]
//! (cudarc and NVRTC); [`msl_emu`], the generated MSL compiled as C++ and run on the
//! CPU. [`validate`] runs every kernel, variant and validation case on a backend and
//! compares it with the interpreter; [`manifest::load`] reads a generated directory,
//! refusing an inconsistent manifest or an artifact that differs from its hash.
//!
//! The applications built on it (decode attention, KV-cache quantization, external
//! fixtures) live in `onekernel-ops`; benchmark harnesses compose [`TimedUnit`]s.

pub mod args;
pub mod backend;
pub mod buffer;
pub mod cpu;
pub mod cuda;
pub mod manifest;
pub mod msl_emu;
pub mod validate;
pub mod vulkan;

pub use args::{ArgValue, Args};
pub use backend::{Backend, BackendError, BufferScope, DeviceInfo, Launch, LaunchStats, Prelude, TimedUnit, Work};
pub use buffer::HostBuffer;
