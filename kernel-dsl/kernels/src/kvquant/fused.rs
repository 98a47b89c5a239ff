//! Fused attention with QJL keys (FORMATS.md §6): one query token per head, keys in
//! `block_qjl1_256`, values in TBQ3 (`v_format = 0`: four `block_tbq3_0` per token,
//! 56 bytes) or PolarQuant (`v_format = 1`: one `block_q4_polar`, 82 bytes, residual
//! per `v_use_qjl`), GQA, optional causal limit, online softmax over tiles of 128 tokens
//! in token order (the fixed reduction order: each tile's max and sum are the
//! workgroup's stride-halving tree).
//!
//! The V mix runs in the codes' own basis and is transformed once at the end: both
//! decodes are linear (TBQ3: `uncond(r)` per 32 elements; Polar: `H128u(c)·d/128`), so
//! `Σ_t w_t·decode(v_t) = decode-transform(Σ_t w_t·r_t)`. Tokens whose weight is exactly
//! 0 are skipped, as in the reference.

use onekernel_macros::kernel;

/// `out[h] = Σ_t softmax(raw)_t · V̂_t` with `raw_t = (√(π/2)/256)·‖k_t‖·(Σ_j σ_tj
/// q_sketch[h][j])·sm_scale`; tokens `t ≤ q_pos` only when `causal`. No token (or a
/// non-finite maximum) gives zeros. Grid `[n_heads, 1, 1]`.
#[kernel(workgroup = 128)]
pub fn fused_attn_qjl(
    #[len(n_heads * 256)] q_sketch: &[f32],
    #[len((n_kv_heads * n_kv * 34 + 3) / 4)] k: &[u32],
    #[len((n_kv_heads * n_kv * select(v_format == 0, 56, 82) + 3) / 4)] v: &[u32],
    #[len(select(v_format == 0, 8, 16))] v_levels: &[f32],
    #[len(select(v_format == 0, 32, 128))] v_signs: &[f32],
    #[len(n_heads * 128)] out: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] n_kv: u32,
    #[push] sm_scale: f32,
    #[push] v_format: u32,
    #[push] v_use_qjl: u32,
    #[push] causal: u32,
    #[push] q_pos: u32,
) {
    let weights = shared::<f32, 128>();
    let mixed = shared::<f32, 128>();
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let half_bits = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 65535 };
    let h = group_id().x;
    let hk = h / (n_heads / n_kv_heads);
    let lid = local_id().x;
    let limit = select(causal != 0, min(n_kv, q_pos + 1), n_kv);
    let mut m = f32::NEG_INFINITY;
    let mut l = 0.0;
    // This invocation's element of the V mix, in the codes' basis.
    let mut acc = 0.0;
    for tile in (0..limit).step_by(128u32) {
        let t = tile + lid;
        let mut s = f32::NEG_INFINITY;
        if t < limit {
            let base = (hk * n_kv + t) * 34;
            let mut dot = 0.0;
            for b in 0..32u32 {
                let bits = byte(k, base + b);
                for i in 0..8u32 {
                    let x = q_sketch[h * 256 + b * 8 + i];
                    dot = select(((bits >> i) & 1) == 1, dot + x, dot - x);
                }
            }
            let norm = f32::from_bits(half_bits(k, base + 32) << 16);
            s = ((0.004895758348888673 * norm) * dot) * sm_scale;
        }
        let tile_max = workgroup_max(s);
        let m_new = max(m, tile_max);
        let alpha = select(m == f32::NEG_INFINITY, 0.0, exp(m - m_new));
        let p = select(s == f32::NEG_INFINITY, 0.0, exp(s - m_new));
        weights[lid] = p;
        let tile_sum = workgroup_sum(p);
        l = fma(l, alpha, tile_sum);
        acc = acc * alpha;
        m = m_new;
        let n = min(128u32, limit - tile);
        for i in 0..n {
            let w = weights[i];
            if w != 0.0 {
                let tt = tile + i;
                let mut r = 0.0;
                if v_format == 0 {
                    let base = ((hk * n_kv + tt) * 4 + lid / 32) * 14;
                    let j = lid % 32;
                    let o = base + 2 + (3 * j) / 8;
                    let shift = (3 * j) % 8;
                    let mut bits = byte(v, o);
                    if shift > 5 {
                        bits = bits | (byte(v, o + 1) << 8);
                    }
                    r = f16_bits_to_f32(half_bits(v, base)) * v_levels[(bits >> shift) & 7];
                } else {
                    let base = (hk * n_kv + tt) * 82;
                    let residual = select(v_use_qjl != 0, select((byte(v, base + 66) & 1) == 1, 0.044194173824159216, -0.044194173824159216), 0.0);
                    let code = byte(v, base + 2 + lid / 2);
                    let c = fma(residual, v_signs[lid], v_levels[select(lid % 2 == 0, code & 15, code >> 4)]);
                    r = c * (f16_bits_to_f32(half_bits(v, base)) * 0.0078125);
                }
                acc = fma(w, r, acc);
            }
        }
        barrier();
    }
    mixed[lid] = acc;
    barrier();
    // Back to the real domain: TBQ3 uncond(y) = s ⊙ H32n(y) per 32; Polar H128u.
    let mut y = 0.0;
    if v_format == 0 {
        let base = lid - lid % 32;
        for j in 0..32u32 {
            y = select(((lid % 32) & j).count_ones() % 2 == 0, y + mixed[base + j], y - mixed[base + j]);
        }
        y = v_signs[lid % 32] * (y * 0.1767766952966369);
    } else {
        for j in 0..128u32 {
            y = select((lid & j).count_ones() % 2 == 0, y + mixed[j], y - mixed[j]);
        }
    }
    let ok = l > 0.0 && m != f32::INFINITY && m == m;
    out[h * 128 + lid] = select(ok, y / select(ok, l, 1.0), 0.0);
}
