//! Sinkhorn-Knopp normalization of hyper-connection mixing matrices.

use onekernel_macros::kernel;

/// For each token's `n × n` matrix `X` (row-major, `n` = 4 or 8): `M = softmax_rows(X) +
/// eps`, then `t_max` rounds of row normalization followed by column normalization
/// (each element divided by its row's, then its column's, sum). One invocation per token
/// (`groups = [ceil(n_tokens / 64), 1, 1]`), so a token's bits do not depend on the
/// batch.
///
/// Every sum runs in index order with a compensated (TwoSum) accumulator, rounded once
/// at the end, and `/` is the library's correctly rounded division: after the last
/// column step each column of the f32 result sums to 1 within one unit in the last
/// place of 1 (`tests/tests/layers.rs` measures it; the row sums are reported there).
#[kernel(workgroup = 64, variants(n = [4u32, 8]))]
pub fn sinkhorn(
    #[len(n_tokens * n * n)] x: &[f32],
    #[len(n_tokens * n * n)] m: &mut [f32],
    #[push] n_tokens: u32,
    #[push] t_max: u32,
    #[push] eps: f32,
) {
    let token = global_id().x;
    if token < n_tokens {
        let base = token * n * n;
        let mut a = [0.0f32; 64];
        for r in 0..n {
            let mut mx = f32::from_bits(0xff80_0000u32);
            for c in 0..n {
                mx = max(mx, x[base + r * n + c]);
            }
            let mut s = 0.0;
            let mut comp = 0.0;
            for c in 0..n {
                let e = exp(x[base + r * n + c] - mx);
                a[r * n + c] = e;
                let t = s + e;
                let bp = t - s;
                comp += (s - (t - bp)) + (e - bp);
                s = t;
            }
            let total = s + comp;
            for c in 0..n {
                a[r * n + c] = a[r * n + c] / total + eps;
            }
        }
        // Even steps normalize the rows, odd steps the columns: line i's elements are
        // a[i·outer + j·inner], j = 0 … n − 1.
        for step in 0..2 * t_max {
            let mut outer = n;
            let mut inner = 1u32;
            if step % 2 == 1 {
                outer = 1;
                inner = n;
            }
            for i in 0..n {
                let mut s = 0.0;
                let mut comp = 0.0;
                for j in 0..n {
                    let v = a[i * outer + j * inner];
                    let t = s + v;
                    let bp = t - s;
                    comp += (s - (t - bp)) + (v - bp);
                    s = t;
                }
                let total = s + comp;
                for j in 0..n {
                    a[i * outer + j * inner] = a[i * outer + j * inner] / total;
                }
            }
        }
        for i in 0..n * n {
            m[base + i] = a[i];
        }
    }
}
