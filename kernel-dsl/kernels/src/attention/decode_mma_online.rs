//! Decode attention on tensor cores with an online softmax:
//! `attn_decode_chunk_mma_online`, the `fast`-class chunk kernel for long chunks.
//!
//! Same grid, inputs and partial results as `attn_decode_chunk` and
//! `attn_decode_chunk_mma` (their module docs), so `attn_decode_combine` merges it. Where
//! `attn_decode_chunk_mma` keeps a chunk's scores in shared memory (at most 512 tokens)
//! and runs a K pass, the softmax, then a V pass, this kernel takes K and V of each 64-row
//! tile together and keeps a running maximum and sum (the accumulators rescaled per
//! tile), so a chunk can be as long as a sequence: a workgroup's fixed costs are paid
//! once per thousands of tokens, and no pass waits for a softmax over the whole chunk
//! (docs/PERFORMANCE.md, "Tensor cores").

use onekernel_macros::kernel;

/// Scores, softmax numerators and weighted V of one chunk of any length for the (up to
/// eight) query heads of one KV head, with f16 K and V rows of 128 dimensions.
///
/// The query heads, rounded to f16 (to nearest even; magnitudes below 2^-14 become zero),
/// are the columns of B. Tile u (tokens 64u … of the chunk) moves K and V through one of
/// two stages of shared buffers with 16-byte `async_copy`s, tile u + 1's copies issued
/// before tile u is used; the block table of tile u + 2 is read meanwhile. Per tile: each
/// group of 32 invocations scores 16 tokens as one `mma_f16` (16 tokens × 128 dimensions
/// by 128 × the heads); per head the tile's maximum over the head's 32 (16 with more than
/// four heads) invocations in lane order, the running maximum `m`, the factor
/// `α = exp(m_old − m)`, the numerators `exp(s − m)` rounded to f16 and each
/// invocation's running sum `l ← l·α + Σ p` in f32; each group rescales its 32
/// dimensions of the accumulators by α and adds Σ p · v as two `mma_f16` (16 dimensions
/// × 64 tokens by 64 tokens × the heads, V read transposed). At the end the invocations'
/// sums are added in lane order. Rows of a last tile past the chunk repeat its last
/// token (finite values) and their numerators are zero. Sequence b's tokens, the chunks
/// and the block table are as in `attn_decode_chunk` with `paged`; no softcap and no
/// ALiBi (the runtime takes the `exact` kernel for those).
#[kernel(workgroup = 128, fast, variants(paged = [false, true]))]
pub fn attn_decode_chunk_mma_online(
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
    // Two stages, each a K and a V tile of 64 rows × 136 f16 values (128 + 8:
    // consecutive rows start 4 banks apart, so each 8 × 8 matrix load hits all 32
    // banks): stage s's K tile at 8704·s words, its V tile 4352 words further.
    let kv = shared::<u32, 17408u32>();
    // The tile's scores [8 heads][68 tokens].
    let st = shared::<f32, 544u32>();
    // The tile's f16 numerators [8 heads][72 values], two per word.
    let pt = shared::<u32, 288u32>();
    // [8 heads][136] f16 query values, two per word.
    let qh = shared::<u32, 544u32>();
    // [8 heads][128 dimensions] f32 sums Σ p · v.
    let o = shared::<f32, 1024u32>();
    // Per invocation: the tile's maximum, then (after the loop) the running sum.
    let red = shared::<f32, 128u32>();
    // Per head: the running maximum in two slots (read one, write the other per tile)
    // and the tile's factor α.
    let hm = shared::<f32, 24u32>();
    // The cache cells of the rows of two tiles (a ring: tile u in slot u % 2).
    let cells = shared::<u32, 128u32>();
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
    let warp = t0 / 32;
    let lane = t0 % 32;
    let len = kv_len[b];
    let group = n_heads / n_kv_heads;
    let start = c * chunk_tokens;
    let end = min(start + chunk_tokens, len);
    let n = select(end > start, end - start, 0u32);
    let head0 = kvh * group;
    let tiles = (n + 63) / 64;
    // The cache cell ((page·page_size + slot)·n_kv_heads + kvh) of token t of sequence b.
    let cell_of = |t: u32, b: u32, kvh: u32| -> u32 {
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        (page * page_size + t % page_size) * n_kv_heads + kvh
    };
    // Rows past the chunk repeat its last token.
    if t0 < 64 && tiles > 0 {
        let c0 = cell_of(start + min(t0, n - 1), b, kvh);
        cells[t0] = c0;
        if tiles > 1 {
            let c1 = cell_of(start + min(64 + t0, n - 1), b, kvh);
            cells[64 + t0] = c1;
        }
    }
    for i in (t0..544u32).step_by(WORKGROUP_X) {
        let h = i / 68;
        let w = i % 68;
        let mut bits = 0u32;
        if h < group && w < 64 {
            let row = (b * n_heads + head0 + h) * 128 + 2 * w;
            bits = to_f16(q[row]) | (to_f16(q[row + 1]) << 16);
        }
        qh[i] = bits;
    }
    for i in (t0..1024u32).step_by(WORKGROUP_X) {
        o[i] = 0.0;
    }
    if t0 < 24 {
        hm[t0] = select(t0 < 16, f32::NEG_INFINITY, 0.0);
    }
    barrier();
    // Softmax roles: `lph` invocations per head, token pairs l, l + lph, … of a tile.
    let lph = select(group > 4, 16u32, 32u32);
    let h = t0 / lph;
    let l = t0 % lph;
    let mut lsum = 0.0;
    let quad = t0 % 16;
    for u in 0..tiles + 1 {
        // Tile u's copies (stage u % 2, whose last tile was used before the barrier that
        // ended the iteration before); then tile u − 1 is used.
        if u < tiles {
            let kb = (u % 2) * 8704;
            for r in (t0 / 16..64u32).step_by(8) {
                let src = cells[(u % 2) * 64 + r] * 64 + quad * 4;
                async_copy(kv, kb + r * 68 + quad * 4, k, src, 4);
                async_copy(kv, kb + 4352 + r * 68 + quad * 4, v, src, 4);
            }
        }
        async_commit();
        if u >= 1 {
            let t = u - 1;
            async_wait(1);
            barrier();
            // The block table of tile u + 1 (issued next iteration) into the slot that tile
            // u − 1's copies read before this barrier.
            if u + 1 < tiles && t0 < 64 {
                let cn = cell_of(start + min(64 * (u + 1) + t0, n - 1), b, kvh);
                cells[((u + 1) % 2) * 64 + t0] = cn;
            }
            let kb_h = (t % 2) * 17408;
            // Scores of the group's 16 tokens, from zero.
            for e in (lane..16 * group).step_by(32) {
                st[(e / 16) * 68 + 16 * warp + e % 16] = 0.0;
            }
            mma_f16(st, 16 * warp, 1, 68, group, kv, kb_h + 16 * warp * 136, 136, false, qh, 0, 136, 128);
            barrier();
            // The tile's maximum per head.
            let mut mx = f32::NEG_INFINITY;
            let mut x0 = f32::NEG_INFINITY;
            let mut x1 = f32::NEG_INFINITY;
            let mut x2 = f32::NEG_INFINITY;
            let mut x3 = f32::NEG_INFINITY;
            if h < group {
                for e in 0..4u32 {
                    // Pair l + lph·(e / 2): tokens 2l, 2l + 1 (and 2l + 32, 2l + 33 with
                    // 16 invocations per head).
                    let i = 2 * (l + lph * (e / 2)) + e % 2;
                    let tok = 64 * t + i;
                    let mut x = f32::NEG_INFINITY;
                    if (e < 2 || group > 4) && tok < n {
                        x = st[h * 68 + i] * scale;
                        if has_mask != 0 {
                            x = x + mask[b * pages_per_seq * page_size + start + tok];
                        }
                    }
                    mx = max(mx, x);
                    if e == 0 {
                        x0 = x;
                    } else if e == 1 {
                        x1 = x;
                    } else if e == 2 {
                        x2 = x;
                    } else {
                        x3 = x;
                    }
                }
            }
            red[t0] = mx;
            barrier();
            let m_old = hm[(t % 2) * 8 + min(h, 7u32)];
            let mut m = m_old;
            for j in 0..lph {
                m = max(m, red[h * lph + j]);
            }
            let alpha = select(m_old == f32::NEG_INFINITY, 0.0, exp(m_old - m));
            // Numerators of the lane's token pairs, zero past the chunk.
            if h < group {
                let mut ps = 0.0;
                for pr in 0..select(group > 4, 2u32, 1u32) {
                    let xa = select(pr == 0, x0, x2);
                    let xb = select(pr == 0, x1, x3);
                    let pa = to_f16(select(xa == f32::NEG_INFINITY, 0.0, exp(xa - m)));
                    let pb = to_f16(select(xb == f32::NEG_INFINITY, 0.0, exp(xb - m)));
                    ps = ps + f16_bits_to_f32(pa) + f16_bits_to_f32(pb);
                    pt[h * 36 + l + lph * pr] = pa | (pb << 16);
                }
                lsum = fma(lsum, alpha, ps);
                if l == 0 {
                    hm[((t + 1) % 2) * 8 + h] = m;
                    hm[16 + h] = alpha;
                }
            }
            barrier();
            // The group's 32 dimensions: rescaled, then Σ p · v added.
            for hh in 0..group {
                o[hh * 128 + 32 * warp + lane] = o[hh * 128 + 32 * warp + lane] * hm[16 + hh];
            }
            for mt in 0..2u32 {
                mma_f16(o, 32 * warp + 16 * mt, 1, 128, group, kv, kb_h + 4352 * 2 + 32 * warp + 16 * mt, 136, true, pt, 0, 72, 64);
            }
            barrier();
        }
    }
    red[t0] = lsum;
    barrier();
    if tiles == 0 {
        if t0 < group {
            let row = (b * n_heads + head0 + t0) * n_chunks + c;
            part_m[row] = f32::NEG_INFINITY;
            part_l[row] = 0.0;
        }
    } else if l == 0 && h < group {
        let mut total = 0.0;
        for j in 0..lph {
            total += red[h * lph + j];
        }
        let row = (b * n_heads + head0 + h) * n_chunks + c;
        part_m[row] = hm[(tiles % 2) * 8 + h];
        part_l[row] = total;
    }
    for i in (t0..group * 128).step_by(WORKGROUP_X) {
        part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + i % 128] = o[i];
    }
}
