//! # onekernel-runtime
//!
//! Runs onekernel kernels. This crate holds the backend-neutral pieces (host buffers
//! and launch arguments) and the `cpu` backend: the reference interpreter whose results
//! define what every GPU backend must reproduce bit for bit (DESIGN.md §4).

pub mod args;
pub mod attention;
pub mod backend;
pub mod buffer;
pub mod cpu;
pub mod cuda;
pub mod fixture;
mod json;
pub mod kvquant;
pub mod l2_flush;
pub mod validate;
pub mod vulkan;

pub use args::{Args, ArgValue};
pub use backend::{Backend, BackendError, BufferScope, DeviceInfo, Launch, LaunchStats};
pub use buffer::HostBuffer;
pub use l2_flush::L2Flush;
