//! Mixture-of-experts routing.

use onekernel_macros::kernel;

/// Top-k routing of one token per workgroup (`groups = [n_tokens, 1, 1]`):
/// `s_e = sqrt(softplus(logit_e))`, the k experts with the largest `s_e + bias_e`
/// (ties to the lower expert index; NaN scores are never chosen), and their weights
/// `w_j = s_j / (s_0 + … + s_{k−1}) · routing_scale`, the sum taken in selection order
/// (largest score first).
///
/// Each invocation holds the scores of experts `t, t + 128, …` (at most 8: E ≤ 1024) and
/// keeps the first largest of its own; `workgroup_argmax` combines the invocations'
/// pairs by the same rule, so the choice does not depend on the workgroup size or on the
/// other tokens of the batch. A chosen expert's score becomes NaN in its owner's list.
/// Where fewer than k experts have a score, the remaining slots hold expert `n_experts`
/// with weight 0.
#[kernel(workgroup = 128)]
pub fn moe_route(
    #[len(num_groups().x * n_experts)] logits: &[f32],
    #[len(n_experts)] bias: &[f32],
    #[len(num_groups().x * k)] experts: &mut [u32],
    #[len(num_groups().x * k)] weights: &mut [f32],
    #[push] n_experts: u32,
    #[push] k: u32,
    #[push] routing_scale: f32,
) {
    let token = group_id().x;
    let t = local_id().x;
    let base = token * n_experts;
    let nan = f32::from_bits(0x7fc0_0000u32);
    let mut score = [0.0f32; 8];
    for j in 0..8u32 {
        let e = t + j * WORKGROUP_X;
        let mut v = nan;
        if e < n_experts {
            v = sqrt(softplus(logits[base + e])) + bias[e];
        }
        score[j] = v;
    }
    for slot in 0..k {
        // (−∞, n_experts): loses every tie, and a NaN can never replace it.
        let mut best = f32::from_bits(0xff80_0000u32);
        let mut at = n_experts;
        for j in 0..8u32 {
            let v = score[j];
            let e = t + j * WORKGROUP_X;
            if v > best || (v == best && e < at) {
                best = v;
                at = e;
            }
        }
        let (_top, winner) = workgroup_argmax(best, at);
        if winner < n_experts && winner % WORKGROUP_X == t {
            score[winner / WORKGROUP_X] = nan;
        }
        if t == 0 {
            experts[token * k + slot] = winner;
            let mut s = 0.0;
            if winner < n_experts {
                s = sqrt(softplus(logits[base + winner]));
            }
            weights[token * k + slot] = s;
        }
    }
    if t == 0 {
        let mut total = 0.0;
        for slot in 0..k {
            total += weights[token * k + slot];
        }
        for slot in 0..k {
            let s = weights[token * k + slot];
            let mut w = 0.0;
            if s > 0.0 {
                w = s / total * routing_scale;
            }
            weights[token * k + slot] = w;
        }
    }
}
