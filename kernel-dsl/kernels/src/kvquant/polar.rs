//! PolarQuant (FORMATS.md §5): `block_q4_polar`, 82 bytes per 128 elements: fp16 ‖x‖,
//! 128 4-bit centroid indices (even i low nibble), and an optional 1-bit QJL residual
//! (bit 0 of byte 66). `use_qjl` is a per-tensor flag, not stored in the block.

use onekernel_macros::kernel;

/// Scores `⟨x̂_r, q⟩` of `num_groups().y` queries against `n_rows` blocks through the
/// exact identity `⟨x̂, q⟩ = (d/128)·⟨c, H128u(q)⟩` (c = centroids after the residual
/// step). With `preht = 1` the caller supplies `hq = H128u(q)` (the `*_preht` path);
/// otherwise the workgroup computes it once.
#[kernel(workgroup = 128)]
pub fn polar_score(
    #[len(num_groups().y * 128)] q: &[f32],
    #[len((n_rows * 82 + 3) / 4)] k: &[u32],
    #[len(16)] centroids: &[f32],
    #[len(128)] psi: &[f32],
    #[len(num_groups().y * n_rows)] scores: &mut [f32],
    #[push] n_rows: u32,
    #[push] use_qjl: u32,
    #[push] preht: u32,
) {
    let hq = shared::<f32, 128>();
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let qi = group_id().y;
    for i in (local_id().x..128u32).step_by(WORKGROUP_X) {
        let mut v = q[qi * 128 + i];
        if preht == 0 {
            // Row i of the unnormalised Sylvester Hadamard matrix: (−1)^popcount(i & j).
            let mut acc = 0.0;
            for j in 0..128u32 {
                let x = q[qi * 128 + j];
                acc = select((i & j).count_ones() % 2 == 0, acc + x, acc - x);
            }
            v = acc;
        }
        hq[i] = v;
    }
    barrier();
    let r = global_id().x;
    if r < n_rows {
        let base = r * 82;
        let d = f16_bits_to_f32((k[base / 4] >> ((base % 4) * 8)) & 65535);
        // σ · 0.5/√128 for the residual, 0 without it.
        let residual = select(use_qjl != 0, select((byte(k, base + 66) & 1) == 1, 0.044194173824159216, -0.044194173824159216), 0.0);
        let mut acc = 0.0;
        for i in 0..128u32 {
            let v = byte(k, base + 2 + i / 2);
            let c = fma(residual, psi[i], centroids[select(i % 2 == 0, v & 15, v >> 4)]);
            acc = fma(c, hq[i], acc);
        }
        scores[qi * n_rows + r] = (d * 0.0078125) * acc;
    }
}

/// Dequantized rows (the five decode steps): `x̂ = fp16(d) · H128u(c) / 128`, one
/// workgroup per row, `[n_rows][128]` out.
#[kernel(workgroup = 128)]
pub fn polar_get_rows(
    #[len((num_groups().x * 82 + 3) / 4)] k: &[u32],
    #[len(16)] centroids: &[f32],
    #[len(128)] psi: &[f32],
    #[len(num_groups().x * 128)] rows: &mut [f32],
    #[push] use_qjl: u32,
) {
    let c = shared::<f32, 128>();
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    let r = group_id().x;
    let base = r * 82;
    let d = f16_bits_to_f32((k[base / 4] >> ((base % 4) * 8)) & 65535);
    let residual = select(use_qjl != 0, select((byte(k, base + 66) & 1) == 1, 0.044194173824159216, -0.044194173824159216), 0.0);
    for i in (local_id().x..128u32).step_by(WORKGROUP_X) {
        let v = byte(k, base + 2 + i / 2);
        c[i] = fma(residual, psi[i], centroids[select(i % 2 == 0, v & 15, v >> 4)]);
    }
    barrier();
    for i in (local_id().x..128u32).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for j in 0..128u32 {
            acc = select((i & j).count_ones() % 2 == 0, acc + c[j], acc - c[j]);
        }
        rows[r * 128 + i] = (acc * 0.0078125) * d;
    }
}
