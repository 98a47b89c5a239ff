//! Row-wise argmax (greedy sampling, top-1 routing).

use onekernel_macros::kernel;

/// The largest value of each row and its column: `value[r] = max_c x[r][c]`,
/// `index[r]` = the smallest column holding it. NaNs are ignored; a row without a
/// number gives (−∞, `n_cols`).
///
/// One workgroup per row (`groups = [n_rows, 1, 1]`): each invocation scans its strided
/// columns in increasing order keeping the first largest, then `workgroup_argmax`
/// combines the invocations' pairs with the same rule (larger value, or equal and
/// smaller column), so the result does not depend on the workgroup size.
#[kernel(workgroup = 256)]
pub fn argmax_rows(
    #[len(num_groups().x * n_cols)] x: &[f32],
    #[len(num_groups().x)] value: &mut [f32],
    #[len(num_groups().x)] index: &mut [u32],
    #[push] n_cols: u32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let base = row * n_cols;
    // (−∞, n_cols): past every column, so it loses every tie, and a NaN (never larger,
    // never equal) cannot replace it.
    let mut best = f32::from_bits(0xff80_0000u32);
    let mut at = n_cols;
    for c in (t..n_cols).step_by(WORKGROUP_X) {
        let v = x[base + c];
        if v > best || (v == best && c < at) {
            best = v;
            at = c;
        }
    }
    let (m, i) = workgroup_argmax(best, at);
    if t == 0 {
        value[row] = m;
        index[row] = i;
    }
}
