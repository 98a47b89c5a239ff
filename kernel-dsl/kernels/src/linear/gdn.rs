//! The gated delta net (ggml `GATED_DELTA_NET`).

use onekernel_macros::kernel;

/// The gated delta rule, token by token, for each sequence `b` and value head `h`:
/// decay the state `S ← exp(g)·S` (with `kda`, row `i` by `exp(g[i])`),
/// `δ[j] = (v[j] − Σᵢ S[i][j]·k[i])·β`, `S[i][j] += k[i]·δ[j]`,
/// `out[j] = (Σᵢ S[i][j]·q[i]) / √S`. Value head `h` reads q/k head `h % n_k_heads`
/// (ggml's broadcast).
///
/// Layouts (row-major): `q`, `k` `[B][T][Hk][S]`; `v`, `out` `[B][T][H][S]`; `g`
/// `[B][T][H]` (with `kda` `[B][T][H][S]`); `beta` `[B][T][H]`; states `[H][S][S]` per
/// sequence, transposed as ggml stores them (`state[h][j][i] = S[i][j]`).
///
/// * `raw_gates`: `beta` and `g` are the projections' raw values: `β = σ(beta)`,
///   `g ← a[h]·softplus(g + dt_bias)` with `dt_bias` `[H]` (with `kda` `[H][S]`).
/// * `gather`: sequence `b` reads its state from slot `slots[b]` of the state cache
///   `state` (else from `state[b]`).
/// * `write_back`: the new state overwrites the state it was read from (else it goes to
///   `state_out[b]` and `state` is only read).
///
/// Grid `[max(S·L/512, 1), H, B]` with `L = min(S, 32)` lanes per column (workgroups past
/// column S do nothing): a workgroup of 128 invocations owns `512/L` state columns `j` of
/// one head (16 at S = 16), four per invocation (two at S = 16); lane `l` of a column holds rows `i = l + L·r` in registers, so each load and
/// store of a warp covers whole rows, as many full 128-byte lines as a warp can. The
/// token's gates are computed once per workgroup (one invocation per decay) and shared.
/// The two sums per token are each lane's `fma` chain over its rows in order of `r`, then
/// the `L` lane sums added through shared memory in a fixed tree (four quarters, each
/// summed in lane order, then the quarters in order): a fixed order whatever the
/// device's subgroup size, so every backend gives the interpreter's bits, and a
/// sequence's bits do not depend on the batch, its slot or the number of tokens per call.
///
/// `resident = 10`: the kernel is bound by the latency of its state loads, each
/// workgroup resident on an SM keeping 16 KiB of them in flight; at the default register
/// budget nvcc gives it more registers and fewer workgroups per SM (docs/PERFORMANCE.md,
/// "Linear attention").
#[kernel(
    workgroup = 128,
    resident = 10,
    variants(s_v = [16u32, 32, 64, 128], kda = [false, true], raw_gates = [false, true], gather = [false, true], write_back = [false, true])
)]
pub fn gated_delta_net(
    #[len(num_groups().z * n_tokens * n_k_heads * s_v)] q: &[f32],
    #[len(num_groups().z * n_tokens * n_k_heads * s_v)] k: &[f32],
    #[len(num_groups().z * n_tokens * num_groups().y * s_v)] v: &[f32],
    #[len(num_groups().z * n_tokens * num_groups().y * select(kda, s_v, 1))] g: &[f32],
    #[len(num_groups().z * n_tokens * num_groups().y)] beta: &[f32],
    #[len(select(raw_gates, num_groups().y, 1))] a: &[f32],
    #[len(select(raw_gates, num_groups().y * select(kda, s_v, 1), 1))] dt_bias: &[f32],
    #[len(select(gather, num_groups().z, 1))] slots: &[i32],
    #[len(select(gather, 1, num_groups().z) * num_groups().y * s_v * s_v)] state: &mut [f32],
    #[len(num_groups().z * n_tokens * num_groups().y * s_v)] out: &mut [f32],
    #[len(select(write_back, 1, num_groups().z * num_groups().y * s_v * s_v))] state_out: &mut [f32],
    #[push] n_k_heads: u32,
    #[push] n_tokens: u32,
) {
    // Lanes per column; each invocation serves four columns `cols` apart (two at S = 16,
    // whose 16 columns are then one workgroup's): the registers the kernel needs bound
    // how many workgroups an SM holds, so a warp must keep more bytes in flight than one
    // column's (docs/PERFORMANCE.md, "Linear attention").
    let lanes = min(s_v, 32u32);
    let cols = 128 / lanes;
    // Columns past S: a grid sized for a larger head (validation runs every head size
    // on one grid) leaves those workgroups idle.
    if group_id().x * select(s_v == 16, 2u32, 4u32) * cols >= s_v {
        return;
    }
    let n_heads = num_groups().y;
    let h = group_id().y;
    let b = group_id().z;
    let hk = h % n_k_heads;
    let me = local_id().x;
    let col = me / lanes;
    let lane = me % lanes;
    // Column c of this invocation: j0 + c·cols.
    let j0 = group_id().x * select(s_v == 16, 2u32, 4u32) * cols + col;
    // Lane sums [4][columns][lanes], then quarter sums [4][columns][4]: δ's in the `_k`
    // arrays, the output's in the `_q` ones (each array's next write is two barriers
    // after its last read).
    let red_k = shared::<f32, 512>();
    let red_q = shared::<f32, 512>();
    let quarter_k = shared::<f32, 128>();
    let quarter_q = shared::<f32, 128>();
    // The token's gates, computed once per workgroup: [0, S) the row decays (one with
    // the scalar gate), [128] β, [129] 1/√S.
    let gates = shared::<f32, 130>();
    let mut slot = b;
    if gather {
        slot = slots[b] as u32;
    }
    let head = (slot * n_heads + h) * s_v;
    // st[4c + r]: row i = lane + lanes·r of column j0 + c·cols.
    let mut st = [0.0; 16];
    for c in 0..select(s_v == 16, 2u32, 4u32) {
        for r in 0..s_v / lanes {
            st[4 * c + r] = state[(head + j0 + c * cols) * s_v + lane + lanes * r];
        }
    }
    if me == 0 {
        gates[129] = 1.0 / sqrt(s_v as f32);
    }
    for t in 0..n_tokens {
        let qk = ((b * n_tokens + t) * n_k_heads + hk) * s_v;
        let th = (b * n_tokens + t) * n_heads + h;
        // The exponentials (and the raw gates' sigmoid and softplus), once per row and
        // workgroup rather than once per invocation.
        if me < select(kda, s_v, 1) {
            let mut gi = g[th * select(kda, s_v, 1) + me];
            if raw_gates {
                gi = a[h] * softplus(gi + dt_bias[h * select(kda, s_v, 1) + me]);
            }
            gates[me] = exp(gi);
        }
        if me == 0 {
            let mut bt = beta[th];
            if raw_gates {
                bt = sigmoid(bt);
            }
            gates[128] = bt;
        }
        barrier();
        let mut kr = [0.0; 4];
        let mut qr = [0.0; 4];
        for r in 0..s_v / lanes {
            kr[r] = k[qk + lane + lanes * r];
            qr[r] = q[qk + lane + lanes * r];
        }
        for c in 0..select(s_v == 16, 2u32, 4u32) {
            let mut sk = 0.0;
            for r in 0..s_v / lanes {
                st[4 * c + r] = st[4 * c + r] * gates[select(kda, lane + lanes * r, 0)];
                sk = fma(st[4 * c + r], kr[r], sk);
            }
            red_k[128 * c + me] = sk;
        }
        barrier();
        if lane < 4 {
            for c in 0..select(s_v == 16, 2u32, 4u32) {
                let mut part = 0.0;
                for m in 0..lanes / 4 {
                    part = part + red_k[128 * c + col * lanes + lane * (lanes / 4) + m];
                }
                quarter_k[32 * c + col * 4 + lane] = part;
            }
        }
        barrier();
        for c in 0..select(s_v == 16, 2u32, 4u32) {
            let at = 32 * c + col * 4;
            let kv = ((quarter_k[at] + quarter_k[at + 1]) + quarter_k[at + 2]) + quarter_k[at + 3];
            let delta = (v[th * s_v + j0 + c * cols] - kv) * gates[128];
            let mut sq = 0.0;
            for r in 0..s_v / lanes {
                st[4 * c + r] = fma(kr[r], delta, st[4 * c + r]);
                sq = fma(st[4 * c + r], qr[r], sq);
            }
            red_q[128 * c + me] = sq;
        }
        barrier();
        if lane < 4 {
            for c in 0..select(s_v == 16, 2u32, 4u32) {
                let mut part = 0.0;
                for m in 0..lanes / 4 {
                    part = part + red_q[128 * c + col * lanes + lane * (lanes / 4) + m];
                }
                quarter_q[32 * c + col * 4 + lane] = part;
            }
        }
        barrier();
        if lane == 0 {
            for c in 0..select(s_v == 16, 2u32, 4u32) {
                let at = 32 * c + col * 4;
                let o = ((quarter_q[at] + quarter_q[at + 1]) + quarter_q[at + 2]) + quarter_q[at + 3];
                out[th * s_v + j0 + c * cols] = o * gates[129];
            }
        }
    }
    let dst = (b * n_heads + h) * s_v;
    for c in 0..select(s_v == 16, 2u32, 4u32) {
        for r in 0..s_v / lanes {
            let i = lane + lanes * r;
            if write_back {
                state[(head + j0 + c * cols) * s_v + i] = st[4 * c + r];
            } else {
                state_out[(dst + j0 + c * cols) * s_v + i] = st[4 * c + r];
            }
        }
    }
}
