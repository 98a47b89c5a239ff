//! `sinkhorn` calls.

use super::{require, LayerError};
use crate::Device;
use onekernel_dsl::types::{Literal, StorageType};
use onekernel_runtime::{Args, HostBuffer};

const K: &str = "sinkhorn";

/// The matrix sizes the kernel is built for (a variant each).
pub const SINKHORN_SIZES: [u32; 2] = [4, 8];

impl Device<'_> {
    /// `M = softmax_rows(X) + eps`, then `t_max` rounds of row and column normalization,
    /// for each token's `n × n` matrix of `x` (`[n_tokens][n][n]`, n = 4 or 8).
    pub fn sinkhorn(&mut self, x: &[f32], n: u32, t_max: u32, eps: f32) -> Result<Vec<f32>, LayerError> {
        require(K, "n", SINKHORN_SIZES.contains(&n), || format!("n = {n}: the kernel is built for n = 4 and 8"))?;
        require(K, "t_max", t_max >= 1, || "t_max = 0: at least one round of normalization".into())?;
        require(K, "eps", eps.is_finite() && eps >= 0.0, || format!("eps = {eps}: a finite, non-negative number"))?;
        let nn = (n * n) as usize;
        require(K, "x", !x.is_empty() && x.len().is_multiple_of(nn), || format!("{} values: not whole {n} × {n} matrices", x.len()))?;
        let tokens = (x.len() / nn) as u32;
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(x))
            .buffer("m", HostBuffer::zeros(StorageType::F32, x.len()))
            .scalar("n_tokens", tokens)
            .scalar("t_max", t_max)
            .scalar("eps", eps);
        self.launch_variant(K, &[("n", Literal::U32(n))], &mut args, [tokens.div_ceil(64), 1, 1])?;
        Ok(args.get_buffer("m").map(|b| b.to_f32()).unwrap_or_default())
    }
}
