//! Linear attention: the recurrent layers of hybrid models (Qwen3-Next, Kimi Linear,
//! Mamba-2 hybrids), in ggml's conventions (`tests/fixtures/gdn/README.md`).
//!
//! * [`gdn::gated_delta_net`]: the gated delta rule over an S × S state per sequence and
//!   value head, with the state read from and written back to a slot of a state cache.
//! * [`conv::ssm_conv`]: the depthwise causal short convolution, with the conv state
//!   read from and written back to a slot.
//! * [`scan::ssm_scan`]: ggml's selective scan (Mamba-1 and Mamba-2 forms).
//! * [`rows::copy_rows`]: the unfused gather / scatter / concatenation of state rows
//!   through a slot table, the sequence each fused kernel is proven equal to.

pub mod conv;
pub mod gdn;
pub mod rows;
pub mod scan;
