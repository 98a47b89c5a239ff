//! TurboQuant score kernels (FORMATS.md §1–3): query heads against cached rows of 128
//! elements in one of five layouts, chosen by the `format` variant (a specialization
//! constant, so each layout compiles to its own straight-line decode):
//!
//! | format | layout | bytes / row | score |
//! |---|---|---|---|
//! | 0 | legacy `block_turbo3_0` ×4 (norm, 2+1-bit split indices) | 56 | rotated domain |
//! | 1 | `block_tbq3_0` ×4 (d, 96-bit stream of 3-bit codes) | 56 | rotated or real domain |
//! | 2 | legacy 66-byte `block_turbo4_0` (norm, 128 nibbles, even j low) | 66 | rotated domain |
//! | 3 | `block_tbq4_0` ×4 (d, q4_0 nibble order) | 72 | rotated or real domain |
//! | 4 | `turbo3_tcq` (norm, 392-bit trellis stream) | 52 | rotated domain |
//!
//! Rotated domain: `score = Σ_i q[i]·k̂[i]` with `q` consumed as given (the host rotated
//! it). Real domain (`real_domain = 1`, TBQ formats only): `score = ⟨q, uncond(r)⟩`,
//! computed as `⟨H32n(q ⊙ s), r⟩` with the query transformed once per workgroup.
//! `levels` holds the format's codebook (8, 8, 16, 16 or 512 values), `signs` the TBQ
//! signs `s`.

use onekernel_macros::kernel;

/// Scores `scores[h][t]` of query head `h` against row `t` of KV head
/// `h / (n_heads / n_kv_heads)`; rows are laid out `[n_kv_heads][n_tokens]` in `format`
/// (see the module). One query against rows is `n_heads = n_kv_heads = 1`; several
/// queries against the same rows is `n_kv_heads = 1`.
///
/// Work split (docs/KVQUANT.md, "Score kernel structure"): a workgroup takes
/// `tiles_per_group` tiles of 64 rows of one KV head; each tile's bytes are staged in
/// shared memory with coalesced word loads (up to twelve in flight per invocation, the
/// next tile's requested while this one is decoded), then each invocation decodes one
/// 32-element slice of a row once into registers and dots it with the query heads of
/// that KV head, four heads at a time; the four slice sums of a row are added in slice
/// order.
#[kernel(workgroup = 128, variants(format = [0u32, 1, 2, 3, 4]))]
pub fn turbo_score(
    #[len(n_heads * 128)] q: &[f32],
    #[len((n_kv_heads * n_tokens * select(format == 2, 66, select(format == 3, 72, select(format == 4, 52, 56))) + 3) / 4)] k: &[u32],
    #[len(select(format <= 1, 8, select(format == 4, 512, 16)))] levels: &[f32],
    #[len(32)] signs: &[f32],
    #[len(n_heads * n_tokens)] scores: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] n_tokens: u32,
    #[push] real_domain: u32,
    #[push] tiles_per_group: u32,
) {
    // 64 rows of at most 72 bytes from a byte offset of 0 or 2, copied flat, and the
    // words a slice window may read past the last row.
    let tile = shared::<u32, 1160>();
    // The queries of four heads, [4][128].
    let qt = shared::<f32, 512>();
    let lv = shared::<f32, 512>();
    // Slice sums [4 heads][4 slices][64 rows] and slice scales [4 slices][64 rows] (rows
    // innermost: consecutive invocations hit consecutive banks).
    let part = shared::<f32, 1024>();
    let dsh = shared::<f32, 256>();
    let lid = local_id().x;
    let kvh = group_id().y;
    let rb = select(format == 2, 66u32, select(format == 3, 72u32, select(format == 4, 52u32, 56u32)));
    let ntiles = (n_tokens + 63) / 64;
    let tile0 = group_id().x * tiles_per_group;
    let tile_end = min(tile0 + tiles_per_group, ntiles);
    for i in (lid..select(format <= 1, 8u32, select(format == 4, 512u32, 16u32))).step_by(WORKGROUP_X) {
        lv[i] = levels[i];
    }
    let group = n_heads / n_kv_heads;
    let precondition = real_domain != 0 && (format == 1 || format == 3);
    let single_norm = format == 2 || format == 4;
    // Slice roles: a warp shares the slice, so query reads are broadcasts.
    let sl = lid / 32;
    for h0 in (0..group).step_by(4u32) {
        let hn = min(4u32, group - h0);
        let head0 = kvh * group + h0;
        barrier();
        for i in (lid..hn * 128).step_by(WORKGROUP_X) {
            let qb = (head0 + i / 128) * 128;
            let e = i % 128;
            let mut v = q[qb + e];
            if precondition {
                // H32n(q ⊙ s) of e's 32-element block, row e % 32 of the Sylvester matrix.
                let base = qb + e - e % 32;
                let mut acc = 0.0;
                for j in 0..32u32 {
                    let x = signs[j] * q[base + j];
                    acc = select(((e % 32) & j).count_ones() % 2 == 0, acc + x, acc - x);
                }
                v = acc * 0.1767766952966369;
            }
            qt[i] = v;
        }
        barrier();
        // The first head's query slice stays in registers for all tiles: shared-memory
        // bandwidth, not arithmetic, bounds the decode (one table read per element).
        let mut qr = [0.0; 32];
        for e1 in 0..2u32 {
            for e0 in 0..16u32 {
                qr[e1 * 16 + e0] = qt[sl * 32 + e1 * 16 + e0];
            }
        }
        // The first tile's words; later tiles are requested while the previous one is
        // decoded.
        let mut staged = [0u32; 12];
        let first0 = (kvh * n_tokens + tile0 * 64) * rb;
        let nw0 = (first0 + min(64u32, n_tokens - tile0 * 64) * rb + 3) / 4 - first0 / 4;
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
            let off = ((kvh * n_tokens + tb) * rb) % 4;
            // Words a full tile's slice windows may touch; the staged words past this
            // tile's rows are zeros (zero-filled when loaded). Every tile's window holds
            // the first `full` words, so those stores need no test once the loop is
            // unrolled (two compares and a select per word were 14 % of the kernel).
            let nwt = (off + 64 * rb) / 4 + 3;
            let full = 16 * rb + 3;
            barrier();
            for u in 0..12u32 {
                let w = u * WORKGROUP_X + lid;
                if (u + 1) * WORKGROUP_X <= full || w < nwt {
                    tile[w] = staged[u];
                }
            }
            barrier();
            if ti + 1 < tile_end {
                let first = (kvh * n_tokens + tb + 64) * rb;
                let nwn = (first + min(64u32, n_tokens - tb - 64) * rb + 3) / 4 - first / 4;
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
                    let ro = off + r * rb;
                    // The slice's bits start at byte `wb`; its scale (block formats) at `db`.
                    let wb = ro + select(format <= 1, 14 * sl + 2, select(format == 3, 18 * sl + 2, select(format == 2, 16 * sl + 2, 12 * sl + 2)));
                    let db = ro + select(format <= 1, 14 * sl, 18 * sl);
                    let mut d = 1.0;
                    if !single_norm {
                        d = f16_bits_to_f32((tile[db / 4] >> ((db % 4) * 8)) & 65535);
                    }
                    // Five little-endian words from byte wb (wb is even): 32-bit windows of
                    // the staged words, one funnel shift each.
                    let a = wb / 4;
                    let s = (wb % 4) * 8;
                    let mut w = [0u32; 5];
                    for i in 0..5u32 {
                        w[i] = funnel_shr(tile[a + i], tile[a + i + 1], s);
                    }
                    let mut cv = [0.0; 32];
                    if format == 0 {
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                let e = e1 * 16 + e0;
                                let low = (w[e1] >> (2 * e0)) & 3;
                                let high = (w[2] >> e) & 1;
                                cv[e] = lv[low | (high << 2)];
                            }
                        }
                    } else if format == 1 {
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                let p = 3 * (e1 * 16 + e0);
                                cv[e1 * 16 + e0] = lv[((w[p / 32] >> (p % 32)) | ((w[p / 32 + 1] << 1) << (31 - p % 32))) & 7];
                            }
                        }
                    } else if format == 2 {
                        // Byte i holds elements 2i (low nibble) and 2i + 1.
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                let e = e1 * 16 + e0;
                                cv[e] = lv[(w[e / 8] >> (4 * (e % 8))) & 15];
                            }
                        }
                    } else if format == 3 {
                        // Byte i holds elements i (low nibble) and i + 16.
                        for i in 0..16u32 {
                            let b = w[i / 4] >> (8 * (i % 4));
                            cv[i] = lv[b & 15];
                            cv[i + 16] = lv[(b >> 4) & 15];
                        }
                    } else {
                        // State j: the 9 bits from bit 3j of the stream (6 prefix bits, then
                        // one 3-bit symbol per step).
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                let p = 3 * (e1 * 16 + e0);
                                cv[e1 * 16 + e0] = lv[((w[p / 32] >> (p % 32)) | ((w[p / 32 + 1] << 1) << (31 - p % 32))) & 511];
                            }
                        }
                    }
                    dsh[sl * 64 + r] = d;
                    let mut acc0 = 0.0;
                    for e1 in 0..2u32 {
                        for e0 in 0..16u32 {
                            acc0 = fma(qr[e1 * 16 + e0], cv[e1 * 16 + e0], acc0);
                        }
                    }
                    part[sl * 64 + r] = acc0;
                    for hh in 1..hn {
                        let mut acc = 0.0;
                        for e1 in 0..2u32 {
                            for e0 in 0..16u32 {
                                acc = fma(qt[hh * 128 + sl * 32 + e1 * 16 + e0], cv[e1 * 16 + e0], acc);
                            }
                        }
                        part[(hh * 4 + sl) * 64 + r] = acc;
                    }
                }
            }
            barrier();
            for i in (lid..hn * 64).step_by(WORKGROUP_X) {
                let r = i % 64;
                let hh = i / 64;
                if r < tn {
                    let mut score = 0.0;
                    for s2 in 0..4u32 {
                        score = fma(part[(hh * 4 + s2) * 64 + r], dsh[s2 * 64 + r], score);
                    }
                    if single_norm {
                        let ro = off + r * rb;
                        score = score * f16_bits_to_f32((tile[ro / 4] >> ((ro % 4) * 8)) & 65535);
                    }
                    scores[(head0 + hh) * n_tokens + tb + r] = score;
                }
            }
        }
    }
}
