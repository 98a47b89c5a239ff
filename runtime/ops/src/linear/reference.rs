//! Float64 references of the linear-attention kernels, written from the op definitions
//! (`tests/fixtures/gdn/README.md`, ggml's `SSM_SCAN`) and sharing no code with the
//! kernels: the exact f32 inputs, every operation in f64.

use super::{GdnInputs, ScanInputs};

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// ggml's softplus: `ln(1 + eˣ)`, `x` itself above 20.
fn softplus(x: f64) -> f64 {
    if x > 20.0 {
        x
    } else {
        x.exp().ln_1p()
    }
}

/// The gated delta net from `state` (`[B][H][S][S]`, transposed): `(out, new states)`.
pub fn gated_delta_net(x: &GdnInputs, state: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let (s, h_n, hk_n, t_n, b_n) = (x.s_v as usize, x.n_heads as usize, x.n_k_heads as usize, x.n_tokens as usize, x.n_seqs as usize);
    let mut out = vec![0.0; b_n * t_n * h_n * s];
    let mut st: Vec<f64> = state.iter().map(|&v| v as f64).collect();
    for b in 0..b_n {
        for h in 0..h_n {
            let hk = h % hk_n;
            // m[i][j] = S[i][j] = state[b][h][j][i].
            let base = (b * h_n + h) * s * s;
            let at = |i: usize, j: usize| base + j * s + i;
            for t in 0..t_n {
                let th = (b * t_n + t) * h_n + h;
                let qk = ((b * t_n + t) * hk_n + hk) * s;
                let gate = |i: usize| -> f64 {
                    let raw = if x.kda { x.g[th * s + i] } else { x.g[th] } as f64;
                    match &x.raw_gates {
                        Some(r) => r.a[h] as f64 * softplus(raw + if x.kda { r.dt_bias[h * s + i] } else { r.dt_bias[h] } as f64),
                        None => raw,
                    }
                };
                let beta = if x.raw_gates.is_some() { sigmoid(x.beta[th] as f64) } else { x.beta[th] as f64 };
                for i in 0..s {
                    let d = gate(i).exp();
                    for j in 0..s {
                        st[at(i, j)] *= d;
                    }
                }
                let delta: Vec<f64> = (0..s)
                    .map(|j| {
                        let kv: f64 = (0..s).map(|i| st[at(i, j)] * x.k[qk + i] as f64).sum();
                        (x.v[th * s + j] as f64 - kv) * beta
                    })
                    .collect();
                for i in 0..s {
                    for j in 0..s {
                        st[at(i, j)] += x.k[qk + i] as f64 * delta[j];
                    }
                }
                for j in 0..s {
                    let o: f64 = (0..s).map(|i| st[at(i, j)] * x.q[qk + i] as f64).sum();
                    out[th * s + j] = o / (s as f64).sqrt();
                }
            }
        }
    }
    (out, st)
}

/// The short convolution of the window `x` (`[B][C][W − 1 + T]`) with `weight` (`[C][W]`):
/// `[B][T][C]`.
pub fn ssm_conv(d_conv: usize, channels: usize, n_tokens: usize, n_seqs: usize, silu: bool, x: &[f32], weight: &[f32]) -> Vec<f64> {
    let row = d_conv - 1 + n_tokens;
    let mut out = vec![0.0; n_seqs * n_tokens * channels];
    for b in 0..n_seqs {
        for t in 0..n_tokens {
            for c in 0..channels {
                let y: f64 = (0..d_conv).map(|w| x[(b * channels + c) * row + t + w] as f64 * weight[c * d_conv + w] as f64).sum();
                out[(b * n_tokens + t) * channels + c] = if silu { y * sigmoid(y) } else { y };
            }
        }
    }
    out
}

/// ggml's selective scan: `(y, new states [B][H][P][N])`.
pub fn ssm_scan(x: &ScanInputs) -> (Vec<f64>, Vec<f64>) {
    let (h_n, p_n, n_n, g_n, t_n, b_n) =
        (x.n_heads as usize, x.head_dim as usize, x.d_state as usize, x.n_groups as usize, x.n_tokens as usize, x.n_seqs as usize);
    let per = h_n * p_n * n_n;
    let mut y = vec![0.0; b_n * t_n * h_n * p_n];
    let mut out = vec![0.0; b_n * per];
    for b in 0..b_n {
        let mut s: Vec<f64> = x.state[x.ids[b] as usize * per..][..per].iter().map(|&v| v as f64).collect();
        for t in 0..t_n {
            let bt = b * t_n + t;
            for h in 0..h_n {
                let delta = softplus(x.dt[bt * h_n + h] as f64);
                let g = (bt * g_n + h % g_n) * n_n;
                for p in 0..p_n {
                    let x_dt = x.x[(bt * h_n + h) * p_n + p] as f64 * delta;
                    let mut sum = 0.0;
                    for n in 0..n_n {
                        let a = if x.mamba2() { x.a[h] } else { x.a[h * n_n + n] } as f64;
                        let e = &mut s[(h * p_n + p) * n_n + n];
                        *e = *e * (delta * a).exp() + x.b[g + n] as f64 * x_dt;
                        sum += *e * x.c[g + n] as f64;
                    }
                    y[(bt * h_n + h) * p_n + p] = sum;
                }
            }
        }
        out[b * per..][..per].copy_from_slice(&s);
    }
    (y, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gdn(s: u32, kda: bool) -> GdnInputs {
        let n = s as usize;
        GdnInputs {
            s_v: s,
            n_heads: 1,
            n_k_heads: 1,
            n_tokens: 1,
            n_seqs: 1,
            kda,
            q: (0..n).map(|i| 0.5 - i as f32 / n as f32).collect(),
            k: (0..n).map(|i| (i as f32 * 0.37).sin()).collect(),
            v: (0..n).map(|i| (i as f32 * 0.11).cos()).collect(),
            g: vec![-0.25; if kda { n } else { 1 }],
            beta: vec![0.75],
            raw_gates: None,
        }
    }

    /// From a zero state one token gives `S = k ⊗ v·β`, so `out[j] = (k·q)·v[j]·β/√S`.
    #[test]
    fn delta_rule_from_zero_state_is_an_outer_product() {
        let x = gdn(16, false);
        let (out, st) = gated_delta_net(&x, &[0.0; 256]);
        let kq: f64 = x.k.iter().zip(&x.q).map(|(a, b)| *a as f64 * *b as f64).sum();
        for j in 0..16 {
            let want = kq * x.v[j] as f64 * 0.75 / 4.0;
            assert!((out[j] - want).abs() < 1e-12, "out[{j}] {} vs {want}", out[j]);
            // Transposed storage: state[j][i] = S[i][j] = k[i]·v[j]·β.
            assert!((st[j * 16 + 3] - x.k[3] as f64 * x.v[j] as f64 * 0.75).abs() < 1e-12);
        }
    }

    /// The decay multiplies the old state before the delta: with k = 0 the state is
    /// only decayed, row i of S by exp(g[i]) with the KDA gate.
    #[test]
    fn decay_scales_rows_by_their_gate() {
        let mut x = gdn(16, true);
        x.k = vec![0.0; 16];
        x.g = (0..16).map(|i| -(i as f32) / 8.0).collect();
        let state: Vec<f32> = (0..256).map(|e| 1.0 + e as f32).collect();
        let (_, st) = gated_delta_net(&x, &state);
        for j in 0..16 {
            for i in 0..16 {
                let want = state[j * 16 + i] as f64 * (-(i as f64) / 8.0).exp();
                assert!((st[j * 16 + i] - want).abs() < 1e-9);
            }
        }
    }

    /// Raw gates are σ(β) and a·softplus(g + dt_bias): equal to passing those values.
    #[test]
    fn raw_gates_equal_their_transformed_values() {
        let mut raw = gdn(16, false);
        raw.beta = vec![0.3];
        raw.g = vec![0.2];
        raw.raw_gates = Some(super::super::RawGates { a: vec![-0.5], dt_bias: vec![0.1] });
        let mut plain = gdn(16, false);
        plain.beta = vec![sigmoid(0.3) as f32];
        plain.g = vec![(-0.5 * softplus(0.3_f32 as f64)) as f32];
        let state: Vec<f32> = (0..256).map(|e| (e as f32 * 0.01).sin()).collect();
        let (a, _) = gated_delta_net(&raw, &state);
        let (b, _) = gated_delta_net(&plain, &state);
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-6, "{x} vs {y}");
        }
    }

    #[test]
    fn conv_is_a_dot_product_over_the_window() {
        // One channel, W = 3, T = 2: window [1, 2, 3, 4].
        let out = ssm_conv(3, 1, 2, 1, false, &[1.0, 2.0, 3.0, 4.0], &[0.5, -1.0, 2.0]);
        assert_eq!(out, vec![0.5 - 2.0 + 6.0, 1.0 - 3.0 + 8.0]);
        let s = ssm_conv(3, 1, 1, 1, true, &[1.0, 2.0, 3.0], &[0.5, -1.0, 2.0]);
        assert!((s[0] - 4.5 / (1.0 + (-4.5f64).exp())).abs() < 1e-15);
    }

    fn scan(a: Vec<f32>, dt: f32) -> ScanInputs {
        ScanInputs {
            n_heads: 1,
            head_dim: 1,
            d_state: 2,
            n_groups: 1,
            n_tokens: 2,
            n_seqs: 1,
            state: vec![9.0, 9.0, 1.0, -1.0],
            x: vec![2.0, 3.0],
            dt: vec![dt, dt],
            a,
            b: vec![1.0, 0.5, 2.0, 1.0],
            c: vec![1.0, 1.0, 0.5, 2.0],
            ids: vec![1],
        }
    }

    /// Two tokens by hand, from slot 1; dt above 20 is used as is.
    #[test]
    fn scan_follows_ggml_recurrence() {
        let (y, st) = ssm_scan(&scan(vec![-0.5], 30.0));
        let da = (30.0f64 * -0.5).exp();
        let s1 = [1.0 * da + 1.0 * 60.0, -da + 0.5 * 60.0];
        let s2 = [s1[0] * da + 2.0 * 90.0, s1[1] * da + 1.0 * 90.0];
        assert!((y[0] - (s1[0] + s1[1])).abs() < 1e-9);
        assert!((y[1] - (0.5 * s2[0] + 2.0 * s2[1])).abs() < 1e-9);
        assert!((st[0] - s2[0]).abs() < 1e-9 && (st[1] - s2[1]).abs() < 1e-9);
        // Mamba-1: A per state entry, softplus below 20.
        let (y1, _) = ssm_scan(&scan(vec![-0.5, -2.0], 0.0));
        let d = 2f64.ln();
        let e = [1.0 * (-0.5 * d).exp() + 2.0 * d, -(-2.0 * d).exp() + 0.5 * 2.0 * d];
        assert!((y1[0] - (e[0] + e[1])).abs() < 1e-9);
    }
}
