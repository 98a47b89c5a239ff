//! Softmax kernels.

use onekernel_macros::kernel;

/// Softmax of each row of `scale · x`: `y = exp(scale·x − max) / Σ exp(scale·x − max)`.
///
/// One workgroup per row (`groups = [n_rows, 1, 1]`), `n_cols` columns, row-major. The
/// row maximum and the sum use the fixed reduction tree; `exp` and the reciprocal come
/// from the portable math library, so every backend produces the same bits.
#[kernel(workgroup = 128)]
pub fn softmax_rows(
    #[len(num_groups().x * n_cols)] x: &[f32],
    #[len(num_groups().x * n_cols)] y: &mut [f32],
    #[push] n_cols: u32,
    #[push] scale: f32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let base = row * n_cols;
    let mut m = f32::NEG_INFINITY;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        m = max(m, x[base + c] * scale);
    }
    let row_max = workgroup_max(m);
    let mut s = 0.0;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        let e = exp(x[base + c] * scale - row_max);
        y[base + c] = e;
        s += e;
    }
    let total = workgroup_sum(s);
    let inv = recip(total);
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        y[base + c] = y[base + c] * inv;
    }
}
