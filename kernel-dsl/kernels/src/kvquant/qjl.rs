//! QJL (FORMATS.md §4): `block_qjl1_256` keys (256 sign bits of Π·k, bf16 ‖k‖; 34 bytes)
//! for head dimension 128 and a 128×256 projection Π (row-major `prj[i·256 + j]`).

use onekernel_macros::kernel;

/// Attention logits `score[h][t] = (√(π/2)/256)·‖k_t‖·Σ_j σ_tj·q_sketch[h][j]` with GQA
/// (`h_kv = h / (n_heads / n_kv_heads)`; K laid out `[n_kv_heads][n_tokens]`). With
/// `project = 0`, `q` is the pre-projected sketch `[n_heads][256]` (the reference order:
/// ±sketch accumulated over j, then `(scale·norm)·acc`); with `project = 1` (mul_mv),
/// `q` is the raw `[n_heads][128]` query and the sketch `Σ_i q_i·prj[i·256 + j]` is
/// computed once per workgroup, which equals `⟨dequantized k, q⟩`.
#[kernel(workgroup = 128)]
pub fn qjl_score(
    #[len(n_heads * select(project != 0, 128, 256))] q: &[f32],
    #[len((n_kv_heads * n_tokens * 34 + 3) / 4)] k: &[u32],
    #[len(select(project != 0, 32768, 1))] prj: &[f32],
    #[len(n_heads * n_tokens)] scores: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] n_tokens: u32,
    #[push] project: u32,
) {
    let sketch = shared::<f32, 256>();
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let h = group_id().y;
    let lid = local_id().x;
    for j in (lid..256u32).step_by(WORKGROUP_X) {
        let mut s = 0.0;
        if project != 0 {
            for i in 0..128u32 {
                s = fma(q[h * 128 + i], prj[i * 256 + j], s);
            }
        } else {
            s = q[h * 256 + j];
        }
        sketch[j] = s;
    }
    barrier();
    let t = global_id().x;
    if t < n_tokens {
        let base = ((h / (n_heads / n_kv_heads)) * n_tokens + t) * 34;
        let mut acc = 0.0;
        for b in 0..32u32 {
            let bits = byte(k, base + b);
            for i in 0..8u32 {
                let x = sketch[b * 8 + i];
                acc = select(((bits >> i) & 1) == 1, acc + x, acc - x);
            }
        }
        let norm = f32::from_bits(((k[(base + 32) / 4] >> (((base + 32) % 4) * 8)) & 65535) << 16);
        scores[h * n_tokens + t] = (0.004895758348888673 * norm) * acc;
    }
}

/// Dequantized keys `k̂_i = (√(π/2)/256)·‖k‖·Σ_j σ_j·prj[i·256 + j]` (the fallback path):
/// one workgroup per row, `[n_rows][128]` out.
#[kernel(workgroup = 128)]
pub fn qjl_get_rows(
    #[len((num_groups().x * 34 + 3) / 4)] k: &[u32],
    #[len(32768)] prj: &[f32],
    #[len(num_groups().x * 128)] rows: &mut [f32],
) {
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let r = group_id().x;
    let base = r * 34;
    let norm = f32::from_bits(((k[(base + 32) / 4] >> (((base + 32) % 4) * 8)) & 65535) << 16);
    for i in (local_id().x..128u32).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for b in 0..32u32 {
            let bits = byte(k, base + b);
            for s in 0..8u32 {
                let x = prj[i * 256 + b * 8 + s];
                acc = select(((bits >> s) & 1) == 1, acc + x, acc - x);
            }
        }
        rows[r * 128 + i] = (0.004895758348888673 * norm) * acc;
    }
}
