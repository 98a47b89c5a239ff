//! The Vulkan backend (ash, loader opened at run time): runs the generated SPIR-V with
//! the variant's specialization constants, push constants and buffers, times the
//! dispatch with timestamp queries, and turns every message of the Khronos validation
//! layer (enabled when installed, unless `ONEKERNEL_VK_VALIDATION=0`) into an error.
//!
//! Device choice: `ONEKERNEL_VK_DEVICE` (an index or part of the name), else a discrete
//! GPU, else an integrated one, else anything (lavapipe in CI).

mod copy;
mod device;
mod launch;
mod prelude;
mod stats;
mod tiles;

pub use device::Vulkan;
pub use stats::{ExecutableStatistics, Statistic};
