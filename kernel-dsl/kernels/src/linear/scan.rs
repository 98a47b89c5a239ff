//! The selective scan of Mamba layers (ggml `SSM_SCAN`).

use onekernel_macros::kernel;

/// ggml's `SSM_SCAN` as its CPU op defines it. For each sequence `b`, token `t`, head
/// `h` and channel `p` of the head: `Δ = softplus(dt[b][t][h])` (`dt` itself above 20),
/// `xΔ = x[b][t][h][p]·Δ`, and for each state entry `n`, in order,
/// `s = s·exp(Δ·A) + B[b][t][g][n]·xΔ` and `y += s·C[b][t][g][n]` (from 0), with
/// `A = A[h]` (`mamba2`, one decay per head) or `A[h][n]` (Mamba-1), and group
/// `g = h % n_groups`. The state of sequence `b` starts at `state[ids[b]]`
/// (`[.][H][P][N]`); the state after the last token goes to `state_out[b]`, `y` to
/// `y[b][t][h][p]`.
///
/// One invocation per `(h, p)` and sequence, grid `[⌈H·P/64⌉, B, 1]`; each keeps its
/// row of `N` entries in `state_out` between tokens, as ggml does.
#[kernel(workgroup = 64, variants(mamba2 = [false, true]))]
pub fn ssm_scan(
    #[len(n_heads * head_dim * d_state)] state: &[f32],
    #[len(num_groups().y * n_tokens * n_heads * head_dim)] x: &[f32],
    #[len(num_groups().y * n_tokens * n_heads)] dt: &[f32],
    #[len(n_heads * select(mamba2, 1, d_state))] a: &[f32],
    #[len(num_groups().y * n_tokens * n_groups * d_state)] b_in: &[f32],
    #[len(num_groups().y * n_tokens * n_groups * d_state)] c_in: &[f32],
    #[len(num_groups().y)] ids: &[i32],
    #[len(num_groups().y * n_tokens * n_heads * head_dim)] y: &mut [f32],
    #[len(num_groups().y * n_heads * head_dim * d_state)] state_out: &mut [f32],
    #[push] n_heads: u32,
    #[push] head_dim: u32,
    #[push] d_state: u32,
    #[push] n_groups: u32,
    #[push] n_tokens: u32,
) {
    let idx = global_id().x;
    let b = group_id().y;
    if idx < n_heads * head_dim {
        let h = idx / head_dim;
        let row = idx * d_state;
        let src = (ids[b] as u32) * n_heads * head_dim * d_state + row;
        let dst = b * n_heads * head_dim * d_state + row;
        for t in 0..n_tokens {
            let bt = b * n_tokens + t;
            let delta = softplus(dt[bt * n_heads + h]);
            let x_dt = x[bt * n_heads * head_dim + idx] * delta;
            let bc = (bt * n_groups + h % n_groups) * d_state;
            let mut da = 0.0;
            if mamba2 {
                da = exp(delta * a[h]);
            }
            let mut sum = 0.0;
            for n in 0..d_state {
                let mut s = 0.0;
                if t == 0 {
                    s = state[src + n];
                } else {
                    s = state_out[dst + n];
                }
                if !mamba2 {
                    da = exp(delta * a[h * d_state + n]);
                }
                s = s * da + b_in[bc + n] * x_dt;
                sum = sum + s * c_in[bc + n];
                state_out[dst + n] = s;
            }
            y[bt * n_heads * head_dim + idx] = sum;
        }
    }
}
