//! Normalization kernels.

use onekernel_macros::kernel;

/// RMS norm over each row: `y = x · rsqrt(mean(x²) + eps) · w`.
///
/// One workgroup per row (`groups = [n_rows, 1, 1]`); `x` and `y` are `n_rows × n_cols`
/// row-major, `w` has `n_cols` entries. The sum of squares is accumulated per invocation
/// over a strided slice of the row with `fma`, then combined with the fixed
/// stride-halving tree, so the result is the same on every backend.
#[kernel(workgroup = 256, variants(T = [f32, f16]))]
pub fn rms_norm(
    #[len(num_groups().x * n_cols)] x: &[T],
    #[len(n_cols)] w: &[f32],
    #[len(num_groups().x * n_cols)] y: &mut [T],
    #[push] n_cols: u32,
    #[push] eps: f32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let base = row * n_cols;
    let mut acc = 0.0;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        let v = x[base + c];
        acc = fma(v, v, acc);
    }
    let sum_sq = workgroup_sum(acc);
    let scale = rsqrt(sum_sq / (n_cols as f32) + eps);
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        y[base + c] = x[base + c] * scale * w[c];
    }
}

/// Layer norm over each row: `y = (x − mean) · rsqrt(var + eps) · w + b`, with the
/// mean and the (biased) variance of the row.
///
/// One workgroup per row (`groups = [n_rows, 1, 1]`); `x` and `y` are `n_rows × n_cols`
/// row-major, `w` and `b` have `n_cols` entries. Two passes over the row, each a strided
/// per-invocation sum combined with the fixed stride-halving tree: the mean first, then
/// the sum of squared deviations from it (no cancellation of `E[x²] − E[x]²`).
#[kernel(workgroup = 256, variants(T = [f32, f16]))]
pub fn layer_norm(
    #[len(num_groups().x * n_cols)] x: &[T],
    #[len(n_cols)] w: &[f32],
    #[len(n_cols)] b: &[f32],
    #[len(num_groups().x * n_cols)] y: &mut [T],
    #[push] n_cols: u32,
    #[push] eps: f32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let base = row * n_cols;
    let n = n_cols as f32;
    let mut acc = 0.0;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        acc = acc + x[base + c];
    }
    let sum = workgroup_sum(acc);
    let mean = sum / n;
    let mut dev = 0.0;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        let d = x[base + c] - mean;
        dev = fma(d, d, dev);
    }
    let sum_dev = workgroup_sum(dev);
    let scale = rsqrt(sum_dev / n + eps);
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        y[base + c] = fma((x[base + c] - mean) * scale, w[c], b[c]);
    }
}
