//! PolarQuant (FORMATS.md §5): `block_q4_polar`, 82 bytes per 128 elements: fp16 ‖x‖,
//! 128 4-bit centroid indices (even i low nibble), and an optional 1-bit QJL residual
//! (bit 0 of byte 66). `use_qjl` is a per-tensor flag, not stored in the block.

use onekernel_macros::kernel;

/// Scores `scores[h][t] = ⟨x̂_t, q_h⟩` of query head `h` against block `t` of KV head
/// `h / (n_heads / n_kv_heads)` (blocks laid out `[n_kv_heads][n_tokens]`) through the
/// exact identity `⟨x̂, q⟩ = (d/128)·⟨c, H128u(q)⟩` (c = centroids after the residual
/// step). With `preht = 1` the caller supplies `hq = H128u(q)` (the `*_preht` path);
/// otherwise the workgroup computes it once per head.
///
/// Work split as `turbo_score` (docs/KVQUANT.md, "Score kernel structure"):
/// `tiles_per_group` tiles of 64 blocks, each staged in shared memory with coalesced
/// word loads (the next requested while this one is decoded), each 32-element slice
/// decoded once and dotted with four query heads at a time, slice sums added in slice
/// order.
#[kernel(workgroup = 128)]
pub fn polar_score(
    #[len(n_heads * 128)] q: &[f32],
    #[len((n_kv_heads * n_tokens * 82 + 3) / 4)] k: &[u32],
    #[len(16)] centroids: &[f32],
    #[len(128)] psi: &[f32],
    #[len(n_heads * n_tokens)] scores: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] n_tokens: u32,
    #[push] use_qjl: u32,
    #[push] preht: u32,
    #[push] tiles_per_group: u32,
) {
    // 64 blocks of 82 bytes from a byte offset of 0 or 2, and the words past the last
    // block a slice window may read.
    let tile = shared::<u32, 1320>();
    // H128u(q) of four heads, [4][128].
    let hq = shared::<f32, 512>();
    let cent = shared::<f32, 16>();
    let ps = shared::<f32, 128>();
    // Σ ψ_i·hq_i over each 32-element slice, [4 heads][4 slices]: the residual's part.
    let psum = shared::<f32, 16>();
    // Slice sums [4 heads][4 slices][64 blocks] (blocks innermost: no bank conflicts).
    let part = shared::<f32, 1024>();
    let lid = local_id().x;
    let kvh = group_id().y;
    let ntiles = (n_tokens + 63) / 64;
    let tile0 = group_id().x * tiles_per_group;
    let tile_end = min(tile0 + tiles_per_group, ntiles);
    if lid < 16 {
        cent[lid] = centroids[lid];
    }
    ps[lid] = psi[lid];
    let group = n_heads / n_kv_heads;
    let sl = lid / 32;
    for h0 in (0..group).step_by(4u32) {
        let hn = min(4u32, group - h0);
        let head0 = kvh * group + h0;
        barrier();
        for i in (lid..hn * 128).step_by(WORKGROUP_X) {
            let qb = (head0 + i / 128) * 128;
            let e = i % 128;
            let mut v = q[qb + e];
            if preht == 0 {
                // Row e of the unnormalised Sylvester Hadamard matrix: (−1)^popcount(e & j).
                let mut acc = 0.0;
                for j in 0..128u32 {
                    let x = q[qb + j];
                    acc = select((e & j).count_ones() % 2 == 0, acc + x, acc - x);
                }
                v = acc;
            }
            hq[i] = v;
        }
        barrier();
        if lid < hn * 4 {
            let mut acc = 0.0;
            for e in 0..32u32 {
                acc = fma(ps[(lid % 4) * 32 + e], hq[lid * 32 + e], acc);
            }
            psum[lid] = acc;
        }
        // The first head's slice of H128u(q) stays in registers for all tiles: shared-
        // memory bandwidth, not arithmetic, bounds the decode.
        let mut qr = [0.0; 32];
        for e1 in 0..2u32 {
            for e0 in 0..16u32 {
                qr[e1 * 16 + e0] = hq[sl * 32 + e1 * 16 + e0];
            }
        }
        // The first tile's words; later tiles are requested while the previous one is
        // decoded.
        let mut staged = [0u32; 12];
        let first0 = (kvh * n_tokens + tile0 * 64) * 82;
        let nw0 = (first0 + min(64u32, n_tokens - tile0 * 64) * 82 + 3) / 4 - first0 / 4;
        for u in 0..12u32 {
            let w = u * WORKGROUP_X + lid;
            staged[u] = 0u32;
            if w < nw0 {
                staged[u] = k[first0 / 4 + w];
            }
        }
        for ti in tile0..tile_end {
            let tb = ti * 64;
            let tn = min(64u32, n_tokens - tb);
            let off = ((kvh * n_tokens + tb) * 82) % 4;
            // Words a full tile's slice windows may touch; the staged words past this
            // tile's blocks are zeros (zero-filled when loaded). Every tile's window holds
            // the first `full` words, so those stores need no test (as in `turbo_score`).
            let nwt = (off + 64 * 82) / 4 + 3;
            let full = 16u32 * 82 + 3;
            barrier();
            for u in 0..12u32 {
                let w = u * WORKGROUP_X + lid;
                if (u + 1) * WORKGROUP_X <= full || w < nwt {
                    tile[w] = staged[u];
                }
            }
            barrier();
            if ti + 1 < tile_end {
                let first = (kvh * n_tokens + tb + 64) * 82;
                let nwn = (first + min(64u32, n_tokens - tb - 64) * 82 + 3) / 4 - first / 4;
                for u in 0..12u32 {
                    let w = u * WORKGROUP_X + lid;
                    staged[u] = 0u32;
                    if w < nwn {
                        staged[u] = k[first / 4 + w];
                    }
                }
            }
            for rr in 0..2u32 {
                let r = lid % 32 + 32 * rr;
                if r < tn {
                    let ro = off + r * 82;
                    // σ · 0.5/√128 for the residual, 0 without it.
                    let bit = (tile[(ro + 66) / 4] >> (((ro + 66) % 4) * 8)) & 1;
                    let residual = select(use_qjl != 0, select(bit == 1, 0.044194173824159216, -0.044194173824159216), 0.0);
                    // The slice's 16 index bytes as four words (funnel shifts).
                    let wb = ro + 2 + 16 * sl;
                    let a = wb / 4;
                    let s = (wb % 4) * 8;
                    let mut w = [0u32; 4];
                    for i in 0..4u32 {
                        w[i] = funnel_shr(tile[a + i], tile[a + i + 1], s);
                    }
                    // Byte i holds the indices of elements 2i (low nibble) and 2i + 1.
                    let mut cv = [0.0; 32];
                    for e1 in 0..2u32 {
                        for e0 in 0..16u32 {
                            let e = e1 * 16 + e0;
                            cv[e] = cent[(w[e / 8] >> (4 * (e % 8))) & 15];
                        }
                    }
                    // ⟨c + ρψ, hq⟩ over the slice = ⟨c, hq⟩ + ρ·⟨ψ, hq⟩, the second sum
                    // taken once per workgroup (psum).
                    let mut acc0 = 0.0;
                    for e1 in 0..2u32 {
                        for e0 in 0..16u32 {
                            acc0 = fma(cv[e1 * 16 + e0], qr[e1 * 16 + e0], acc0);
                        }
                    }
                    part[sl * 64 + r] = fma(residual, psum[sl], acc0);
                    for hh in 1..hn {
                        let mut acc = 0.0;
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                acc = fma(cv[e1 * 16 + e0], hq[hh * 128 + sl * 32 + e1 * 16 + e0], acc);
                            }
                        }
                        part[(hh * 4 + sl) * 64 + r] = fma(residual, psum[hh * 4 + sl], acc);
                    }
                }
            }
            barrier();
            for i in (lid..hn * 64).step_by(WORKGROUP_X) {
                let r = i % 64;
                let hh = i / 64;
                if r < tn {
                    let ro = off + r * 82;
                    let d = f16_bits_to_f32((tile[ro / 4] >> ((ro % 4) * 8)) & 65535);
                    let total = ((part[hh * 256 + r] + part[hh * 256 + 64 + r]) + part[hh * 256 + 128 + r]) + part[hh * 256 + 192 + r];
                    scores[(head0 + hh) * n_tokens + tb + r] = (d * 0.0078125) * total;
                }
            }
        }
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
