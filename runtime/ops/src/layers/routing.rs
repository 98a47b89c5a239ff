//! `moe_route` calls.

use super::{require, LayerError};
use crate::Device;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, HostBuffer};

const K: &str = "moe_route";

/// The most experts one call routes over (eight per invocation of a 128-wide workgroup).
pub const MAX_EXPERTS: u32 = 1024;

/// The routing of a batch: `[n_tokens][k]` experts and weights, in selection order.
#[derive(Clone, Debug, PartialEq)]
pub struct Routing {
    /// Chosen experts (`n_experts` where fewer than k experts had a score).
    pub experts: Vec<u32>,
    /// Their weights `s_j / Σ s · routing_scale`.
    pub weights: Vec<f32>,
}

impl Device<'_> {
    /// Routes each token of `logits` (`[n_tokens][n_experts]`) to its `k` experts:
    /// `s = sqrt(softplus(logits))`, the top k of `s + bias` (ties to the lower expert,
    /// NaN never chosen), weights `s / Σ s · routing_scale` (docs/LAYERS.md).
    pub fn moe_route(&mut self, logits: &[f32], bias: &[f32], k: u32, routing_scale: f32) -> Result<Routing, LayerError> {
        let e = bias.len() as u32;
        require(K, "bias", (1..=MAX_EXPERTS).contains(&e), || format!("{e} experts; a call routes over 1 … {MAX_EXPERTS}"))?;
        require(K, "k", k >= 1 && k <= e, || format!("k = {k}: 1 … {e} (the number of experts)"))?;
        require(K, "logits", !logits.is_empty() && logits.len().is_multiple_of(e as usize), || {
            format!("{} values: not whole rows of {e} experts", logits.len())
        })?;
        let n = (logits.len() / e as usize) as u32;
        let mut args = Args::new()
            .buffer("logits", HostBuffer::from_f32(logits))
            .buffer("bias", HostBuffer::from_f32(bias))
            .buffer("experts", HostBuffer::zeros(StorageType::U32, (n * k) as usize))
            .buffer("weights", HostBuffer::zeros(StorageType::F32, (n * k) as usize))
            .scalar("n_experts", e)
            .scalar("k", k)
            .scalar("routing_scale", routing_scale);
        self.launch_variant(K, &[], &mut args, [n, 1, 1])?;
        let experts = args.get_buffer("experts").map(|b| b.to_u32()).unwrap_or_default();
        let weights = args.get_buffer("weights").map(|b| b.to_f32()).unwrap_or_default();
        Ok(Routing { experts, weights })
    }
}
