//! The float64 reference of decode attention, written in plain Rust from the fixture
//! schema's definition (`tests/fixtures/attention/README.md`), independent of the
//! DSL kernels: per head `s_t = scale·(q·k_t)`, optional softcap, `+ slope_h·mask_t`,
//! `p = softmax(s ∪ {sink_h})` over the valid tokens, `out = Σ_t p_t v_t`.

use super::problem::DecodeProblem;

/// ggml's ALiBi slope of head `h` of `n_heads`.
pub fn alibi_slope(h: u32, n_heads: u32, max_bias: f64) -> f64 {
    if max_bias <= 0.0 {
        return 1.0;
    }
    let n = 1u32 << (31 - n_heads.leading_zeros());
    let m0 = 2f64.powf(-max_bias / n as f64);
    let m1 = 2f64.powf(-max_bias / 2.0 / n as f64);
    if h < n {
        m0.powi(h as i32 + 1)
    } else {
        m1.powi(2 * (h - n) as i32 + 1)
    }
}

/// The `[B][Hq][Dv]` output in float64 over the stored (dequantized) cache values, exact
/// for every format ([`super::KvFormat::decode_row_f64`]).
pub fn reference(p: &DecodeProblem) -> Vec<f64> {
    let (d, hq, hkv, ps, pps) = (p.head_dim as usize, p.n_heads as usize, p.n_kv_heads as usize, p.page_size as usize, p.pages_per_seq as usize);
    let dv = p.v_dim() as usize;
    let (kb, vb) = (p.k_format.row_bytes(d), p.v_format.row_bytes(dv));
    let mut out = vec![0.0f64; p.kv_len.len() * hq * dv];
    for (s, &len) in p.kv_len.iter().enumerate() {
        let page = |t: usize| match &p.block_table {
            Some(tab) => tab[s * pps + t / ps] as usize,
            None => s * pps + t / ps,
        };
        for h in 0..hq {
            let kvh = h / (hq / hkv);
            let row = |t: usize| (page(t) * ps + t % ps) * hkv + kvh;
            let q = &p.q[(s * hq + h) * d..][..d];
            let mut logits: Vec<f64> = (0..len as usize)
                .map(|t| {
                    let k = p.k_format.decode_row_f64(&p.k[row(t) * kb..][..kb], d);
                    let mut x = p.scale as f64 * q.iter().zip(&k).map(|(a, b)| *a as f64 * b).sum::<f64>();
                    if p.softcap > 0.0 {
                        let c = p.softcap as f64;
                        x = c * (x / c).tanh();
                    }
                    if let Some(m) = &p.mask {
                        x += alibi_slope(h as u32, hq as u32, p.max_bias as f64) * m[s * pps * ps + t] as f64;
                    }
                    x
                })
                .collect();
            let sink = p.sinks.as_ref().map(|v| v[h] as f64);
            let m = logits.iter().copied().chain(sink).fold(f64::NEG_INFINITY, f64::max);
            let denom: f64 = logits.iter().copied().chain(sink).map(|x| (x - m).exp()).sum();
            for x in logits.iter_mut() {
                *x = (*x - m).exp() / denom;
            }
            let o = &mut out[(s * hq + h) * dv..][..dv];
            for (t, pt) in logits.iter().enumerate() {
                let v = p.v_format.decode_row_f64(&p.v[row(t) * vb..][..vb], dv);
                for (o, vx) in o.iter_mut().zip(&v) {
                    *o += pt * vx;
                }
            }
        }
    }
    out
}

/// Σ(out − ref)² / Σ ref² and max |out − ref|.
pub fn compare(out: &[f32], want: &[f64]) -> (f64, f64) {
    let (mut err2, mut ref2, mut max_abs) = (0.0f64, 0.0f64, 0.0f64);
    for (o, w) in out.iter().zip(want) {
        let e = *o as f64 - w;
        err2 += e * e;
        ref2 += w * w;
        max_abs = max_abs.max(e.abs());
    }
    (if ref2 > 0.0 { err2 / ref2 } else { err2 }, max_abs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alibi_slopes_follow_ggml() {
        // n_heads 12: n = 8, m0 = 2^-1, m1 = 2^-0.5 for max_bias 8.
        assert_eq!(alibi_slope(0, 12, 8.0), 0.5);
        assert_eq!(alibi_slope(7, 12, 8.0), 0.5f64.powi(8));
        assert!((alibi_slope(8, 12, 8.0) - 2f64.powf(-0.5)).abs() < 1e-15);
        assert!((alibi_slope(9, 12, 8.0) - 2f64.powf(-1.5)).abs() < 1e-15);
        assert_eq!(alibi_slope(3, 12, 0.0), 1.0);
    }
}
