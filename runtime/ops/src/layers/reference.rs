//! Float64 references of the layer kernels, written from their definitions
//! (docs/LAYERS.md), independent of the kernels' f32 formulations.

use super::{RopeCache, RopeInputs, RopePairing};

/// RoPE in f64 over the cache's (rounded) values: `[n_tokens][n_heads][head_dim]`.
pub fn rope(x: &RopeInputs, cache: &RopeCache) -> Vec<f64> {
    let (d, h, rot, off) = (x.head_dim as usize, x.n_heads as usize, cache.n_rot as usize, x.rot_offset as usize);
    let half = rot / 2;
    let mut out: Vec<f64> = x.x.iter().map(|&v| v as f64).collect();
    for (t, &p) in x.pos.iter().enumerate() {
        for head in 0..h {
            let row = (t * h + head) * d;
            for i in 0..half {
                let (a, b) = match x.pairing {
                    RopePairing::NeoX => (off + i, off + i + half),
                    RopePairing::Interleaved => (off + 2 * i, off + 2 * i + 1),
                };
                let c = cache.cos[p as usize * half + i] as f64;
                let s = cache.sin[p as usize * half + i] as f64 * if x.inverse { -1.0 } else { 1.0 };
                let (x0, x1) = (x.x[row + a] as f64, x.x[row + b] as f64);
                // The inverse is exact for the cached values: divided by c² + s².
                let q = if x.inverse { c * c + s * s } else { 1.0 };
                out[row + a] = (x0 * c - x1 * s) / q;
                out[row + b] = (x0 * s + x1 * c) / q;
            }
        }
    }
    out
}

/// `log(1 + e^x)`, accurate in f64 over the whole range.
fn softplus(x: f64) -> f64 {
    if x > 30.0 {
        x + (-x).exp().ln_1p()
    } else {
        x.exp().ln_1p()
    }
}

/// MoE routing in f64: per token the `k` experts of largest `sqrt(softplus(l)) + bias`
/// (ties to the lower index), and `s / Σ s · scale`.
pub fn moe_route(logits: &[f32], bias: &[f32], k: usize, scale: f64) -> (Vec<u32>, Vec<f64>) {
    let e = bias.len();
    let (mut experts, mut weights) = (Vec::new(), Vec::new());
    for row in logits.chunks(e) {
        let s: Vec<f64> = row.iter().map(|&l| softplus(l as f64).sqrt()).collect();
        let mut order: Vec<usize> = (0..e).collect();
        order.sort_by(|&a, &b| (s[b] + bias[b] as f64).total_cmp(&(s[a] + bias[a] as f64)).then(a.cmp(&b)));
        let top = &order[..k];
        let total: f64 = top.iter().map(|&i| s[i]).sum();
        experts.extend(top.iter().map(|&i| i as u32));
        weights.extend(top.iter().map(|&i| s[i] / total * scale));
    }
    (experts, weights)
}

/// Sinkhorn-Knopp in f64: softmax of each row plus `eps`, then `t_max` rounds of row
/// and column normalization; `[n_tokens][n][n]`.
pub fn sinkhorn(x: &[f32], n: usize, t_max: u32, eps: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(x.len());
    for m in x.chunks(n * n) {
        let mut a: Vec<f64> = m.iter().map(|&v| v as f64).collect();
        for r in 0..n {
            let row = &mut a[r * n..][..n];
            let mx = row.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let sum: f64 = row.iter().map(|v| (v - mx).exp()).sum();
            for v in row.iter_mut() {
                *v = (*v - mx).exp() / sum + eps;
            }
        }
        for _ in 0..t_max {
            for r in 0..n {
                let sum: f64 = a[r * n..][..n].iter().sum();
                a[r * n..][..n].iter_mut().for_each(|v| *v /= sum);
            }
            for c in 0..n {
                let sum: f64 = (0..n).map(|r| a[r * n + c]).sum();
                (0..n).for_each(|r| a[r * n + c] /= sum);
            }
        }
        out.extend(a);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rope_rotates_a_unit_pair_by_the_cached_angle() {
        // One token at position 1, one head of 4 dims, NeoX pairs (0, 2) and (1, 3).
        let cache = RopeCache { max_pos: 2, n_rot: 4, cos: vec![1.0, 1.0, 0.0, 0.5], sin: vec![0.0, 0.0, 1.0, 0.25] };
        let x = RopeInputs {
            x: vec![1.0, 2.0, 0.0, 4.0],
            pos: vec![1],
            n_heads: 1,
            head_dim: 4,
            rot_offset: 0,
            pairing: RopePairing::NeoX,
            inverse: false,
        };
        // Pair (0, 2): (1, 0) by 90°: (0, 1). Pair (1, 3): (2, 4) with c 0.5, s 0.25: (1 − 1, 0.5 + 2).
        assert_eq!(rope(&x, &cache), vec![0.0, 0.0, 1.0, 2.5]);
        let inv = RopeInputs { x: vec![0.0, 0.0, 1.0, 2.5], inverse: true, ..x };
        assert_eq!(rope(&inv, &cache)[0], 1.0);
    }

    #[test]
    fn routing_picks_the_largest_biased_scores_and_breaks_ties_low() {
        // Equal logits: the bias decides; two equal scores: the lower expert first.
        let (e, w) = moe_route(&[1.0, 1.0, 1.0, 1.0], &[0.0, 0.5, 0.5, -1.0], 2, 1.0);
        assert_eq!(e, vec![1, 2]);
        assert_eq!(w, vec![0.5, 0.5]);
        assert!((softplus(0.0) - 2f64.ln()).abs() < 1e-15 && (softplus(100.0) - 100.0).abs() < 1e-15);
    }

    #[test]
    fn sinkhorn_of_a_constant_matrix_is_uniform() {
        let m = sinkhorn(&[3.0; 16], 4, 5, 0.0);
        assert!(m.iter().all(|&v| (v - 0.25).abs() < 1e-15), "{m:?}");
        // A skewed matrix converges toward doubly stochastic: columns sum to 1 after a round.
        let x: Vec<f32> = (0..16).map(|i| (i * i % 7) as f32).collect();
        let m = sinkhorn(&x, 4, 30, 1e-6);
        for c in 0..4 {
            assert!(((0..4).map(|r| m[r * 4 + c]).sum::<f64>() - 1.0).abs() < 1e-12);
        }
        for r in 0..4 {
            assert!((m[r * 4..][..4].iter().sum::<f64>() - 1.0).abs() < 1e-6);
        }
    }
}
