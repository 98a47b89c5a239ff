//! Decode attention on tensor cores over long chunks: `attn_decode_chunk_mma_long`, the
//! one-wave counterpart of `attn_decode_chunk_mma` (class `fast`, f16 K/V, D = 128).
//!
//! `attn_decode_chunk_mma` keeps a chunk's scores in shared memory for a two-pass
//! softmax, which bounds a chunk at 512 tokens: at the large decode shapes thousands of
//! workgroups each pay the block table and query before their first copy, the softmax
//! between the K and the V pass and their partial results. Here each group of 32
//! invocations keeps its own running softmax (maximum, sum, f32 accumulators) over its
//! rows of every tile, so a chunk has any length and the runtime sizes chunks to fill the
//! device once (docs/PERFORMANCE.md, "Long chunks"); the groups meet once, at the end.
//! The partial results are `attn_decode_chunk_mma`'s, merged by `attn_decode_combine`.

use onekernel_macros::kernel;

/// Scores, softmax and weighted V of one chunk of any length for the (up to eight) query
/// heads of one KV head, with f16 K and V rows of 128 dimensions.
///
/// K and V tiles of 64 rows travel through a ring of four (five with `stages5`) shared
/// buffers by 16-byte `async_copy` in the order K₀ V₀ K₁ V₁ …, so three (four) tiles are
/// in flight while one is used; one barrier per tile frees the buffer that the next copy
/// fills. The block table of a tile's rows is read one tile ahead, while the previous
/// tile is used. Group g (invocations 32g … 32g + 31) takes rows 16g … 16g + 15 of every
/// tile: their scores against the query heads (rounded to f16, the columns of B) as one
/// `mma_f16` of k = 128; per head (eight invocations each, four beyond four heads) the
/// new running maximum, the factor `α = exp(m_old − m_new)` by which the group's sum and
/// accumulators are scaled, and the numerators `exp(s − m_new)` rounded to f16, two (four)
/// tokens per invocation, added to its share of the sum in token order — every `exp` the
/// hardware's (`fast_exp`); then, with the V tile, eight `mma_f16` of k = 16 add the
/// group's Σ p·v to its accumulators `[dimension][head]`. At the end the four groups'
/// maxima, sums (each the head's shares in invocation order) and accumulators are merged
/// in group order. Rows of a last tile past the chunk repeat its last token (finite
/// values) and their numerators are zero. Sequence b's tokens, the chunks, the block
/// table, the mask and the partial results are as in `attn_decode_chunk_mma`; the result
/// does not depend on `stages5`.
#[kernel(workgroup = 128, fast, variants(paged = [false, true], stages5 = [false, true]))]
pub fn attn_decode_chunk_mma_long(
    #[len(num_groups().z * n_heads * 128)] q: &[f32],
    #[len(n_kv_heads * 64)] k: &[u32],
    #[len(n_kv_heads * 64)] v: &[u32],
    #[len(select(paged, num_groups().z * pages_per_seq, 1))] block_table: &[i32],
    #[len(num_groups().z)] kv_len: &[u32],
    #[len(select(has_mask != 0, num_groups().z * pages_per_seq * page_size, 1))] mask: &[f16],
    #[len(num_groups().z * n_heads * n_chunks)] part_m: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks)] part_l: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks * 128)] part_acc: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] page_size: u32,
    #[push] pages_per_seq: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] scale: f32,
    #[push] has_mask: u32,
) {
    // Tiles of 64 rows × 136 f16 values (rows 4 banks apart, as in
    // `attn_decode_chunk_mma`): four buffers, 68 KiB, or five, 85 KiB; with the rest
    // 90 / 107 KiB, so that two workgroups share an SM (CUDA: 228 KiB).
    let kv = shared::<u32, { select(stages5, 21760u32, 17408u32) }>();
    // [8 heads][136] f16 query values, two per word.
    let qh = shared::<u32, 544u32>();
    // Per group: scores [head][16 tokens] (f32), numerators [head][24] (f16, two per
    // word; 24 so that the eight heads' rows of 16 bytes fall on distinct banks) and
    // accumulators [128 dimensions][8 heads] (f32).
    let sw = shared::<f32, 512u32>();
    let pw = shared::<u32, 384u32>();
    let ow = shared::<f32, 4096u32>();
    // The merge: each group's maxima [8 heads] and its invocations' shares of the sums.
    let wm = shared::<f32, 32u32>();
    let wl = shared::<f32, 128u32>();
    // f32 → f16 bits, to nearest even; magnitudes below 2^-14 give a signed zero, those
    // from 65520 up infinity.
    let to_f16 = |x: f32| -> u32 {
        select(
            (x.to_bits() & 2147483647) < 947912704,
            (x.to_bits() >> 16) & 32768,
            select(
                (x.to_bits() & 2147483647) >= 1199566848,
                ((x.to_bits() >> 16) & 32768) | 31744,
                ((x.to_bits() >> 16) & 32768) | ((((x.to_bits() & 2147483647) + 4095 + (((x.to_bits() & 2147483647) >> 13) & 1)) >> 13) - 114688),
            ),
        )
    };
    let c = group_id().x;
    let kvh = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    let g = t0 / 32;
    let lane = t0 % 32;
    let len = kv_len[b];
    let group = n_heads / n_kv_heads;
    // The softmax's roles: `lph` invocations per head (eight up to four heads, four
    // beyond), head h, `tpl` of the group's sixteen tokens from jj·tpl.
    let lph = select(group > 4, 4u32, 8u32);
    let tpl = 16 / lph;
    let h = lane / lph;
    let jj = lane % lph;
    let start = c * chunk_tokens;
    let end = min(start + chunk_tokens, len);
    let n = select(end > start, end - start, 0u32);
    let head0 = kvh * group;
    let tiles = (n + 63) / 64;
    let quad = t0 % 16;
    // The cache cells of this invocation's eight rows (t0/16 + 8j) of the next tile to
    // copy: tile 0's now, each next tile's when the V copies of the one before leave.
    let mut cell = [0u32; 8];
    if n > 0 {
        for j in 0..8u32 {
            let t = start + min(t0 / 16 + 8 * j, n - 1);
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            cell[j] = (page * page_size + t % page_size) * n_kv_heads + kvh;
        }
    }
    for i in (t0..544u32).step_by(WORKGROUP_X) {
        let hq = i / 68;
        let w = i % 68;
        let mut bits = 0u32;
        if hq < group && w < 64 {
            let row = (b * n_heads + head0 + hq) * 128 + 2 * w;
            bits = to_f16(q[row]) | (to_f16(q[row + 1]) << 16);
        }
        qh[i] = bits;
    }
    for e in 0..32u32 {
        ow[g * 1024 + lane + 32 * e] = 0.0;
    }
    let mut m_run = f32::NEG_INFINITY;
    let mut l_run = 0.0;
    let ns = select(stages5, 5u32, 4u32);
    let steps = 2 * tiles;
    // Step s copies tile s/2's K (even s) or V (odd s) into buffer s % ns and, from
    // s = ns − 1 on, uses the tile copied at s − ns + 1, after a barrier that also ends
    // every use of the buffer the copy refills.
    for s in 0..steps + ns - 1 {
        if s + 1 >= ns {
            if stages5 {
                async_wait(3);
            } else {
                async_wait(2);
            }
            barrier();
        }
        if s < steps {
            let buf = (s % ns) * 4352;
            for j in 0..8u32 {
                let r = t0 / 16 + 8 * j;
                if s % 2 == 0 {
                    async_copy(kv, buf + r * 68 + quad * 4, k, cell[j] * 64 + quad * 4, 4);
                } else {
                    async_copy(kv, buf + r * 68 + quad * 4, v, cell[j] * 64 + quad * 4, 4);
                }
            }
            if s % 2 == 1 {
                for j in 0..8u32 {
                    let t = start + min((s / 2 + 1) * 64 + t0 / 16 + 8 * j, n - 1);
                    let logical = b * pages_per_seq + t / page_size;
                    let mut page = logical;
                    if paged {
                        page = block_table[logical] as u32;
                    }
                    cell[j] = (page * page_size + t % page_size) * n_kv_heads + kvh;
                }
            }
        }
        async_commit();
        if s + 1 >= ns {
            let u = s + 1 - ns;
            let tile = u / 2;
            let buf_h = (u % ns) * 8704 + 16 * g * 136;
            if u % 2 == 0 {
                for e in 0..4u32 {
                    sw[g * 128 + 4 * lane + e] = 0.0;
                }
                mma_f16(sw, g * 128, 1, 16, group, kv, buf_h, 136, false, qh, 0, 136, 128);
                if h < group {
                    // The new running maximum over the group's sixteen scaled, masked
                    // scores (−∞ past the chunk).
                    let mut mt = f32::NEG_INFINITY;
                    for i in 0..16u32 {
                        let tok = tile * 64 + 16 * g + i;
                        if tok < n {
                            let mut xi = sw[g * 128 + h * 16 + i] * scale;
                            if has_mask != 0 {
                                xi = xi + mask[b * pages_per_seq * page_size + start + tok];
                            }
                            mt = max(mt, xi);
                        }
                    }
                    let m_new = max(m_run, mt);
                    let alpha = select(m_run == f32::NEG_INFINITY, 0.0, fast_exp(m_run - m_new));
                    l_run = l_run * alpha;
                    // This invocation's tokens: numerators rounded to f16, two per word.
                    for w in 0..tpl / 2 {
                        let mut bits = 0u32;
                        for e in 0..2u32 {
                            let i = jj * tpl + 2 * w + e;
                            let tok = tile * 64 + 16 * g + i;
                            if tok < n {
                                let mut xi = sw[g * 128 + h * 16 + i] * scale;
                                if has_mask != 0 {
                                    xi = xi + mask[b * pages_per_seq * page_size + start + tok];
                                }
                                let p = to_f16(select(xi == f32::NEG_INFINITY, 0.0, fast_exp(xi - m_new)));
                                l_run += f16_bits_to_f32(p);
                                bits = bits | (p << (16 * e));
                            }
                        }
                        pw[g * 96 + h * 12 + jj * (tpl / 2) + w] = bits;
                    }
                    m_run = m_new;
                    if alpha != 1.0 {
                        for e in 0..128 / lph {
                            let at = g * 1024 + (jj + lph * e) * 8 + h;
                            ow[at] = ow[at] * alpha;
                        }
                    }
                }
            } else {
                for db in 0..8u32 {
                    mma_f16(ow, g * 1024 + db * 128, 8, 1, group, kv, buf_h + 16 * db, 136, true, pw, g * 192, 24, 16);
                }
            }
        }
    }
    barrier();
    if h < group {
        wl[g * 32 + lane] = l_run;
        if jj == 0 {
            wm[g * 8 + h] = m_run;
        }
    }
    barrier();
    for i in (t0..group * 128).step_by(WORKGROUP_X) {
        let hh = i / 128;
        let d = i % 128;
        let mut mm = f32::NEG_INFINITY;
        for w in 0..4u32 {
            mm = max(mm, wm[w * 8 + hh]);
        }
        let mut acc = 0.0;
        let mut ls = 0.0;
        for w in 0..4u32 {
            let mw = wm[w * 8 + hh];
            let f = select(mw == f32::NEG_INFINITY, 0.0, fast_exp(mw - mm));
            acc = fma(ow[w * 1024 + d * 8 + hh], f, acc);
            if d == 0 {
                // The head's shares in invocation order.
                let mut lw = 0.0;
                for j in 0..lph {
                    lw += wl[w * 32 + hh * lph + j];
                }
                ls = fma(lw, f, ls);
            }
        }
        let row = (b * n_heads + head0 + hh) * n_chunks + c;
        part_acc[row * 128 + d] = acc;
        if d == 0 {
            part_m[row] = mm;
            part_l[row] = ls;
        }
    }
}
