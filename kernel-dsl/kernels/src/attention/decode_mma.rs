//! Decode attention on tensor cores: `attn_decode_chunk_mma`, the `fast`-class
//! counterpart of `attn_decode_chunk` for f16 caches with D = 128.
//!
//! Same grid, inputs and partial results as `attn_decode_chunk` (its module docs), so
//! `attn_decode_combine` merges either; q·k and p·v are `mma_f16` tiles, which is why
//! the kernel is `fast`: a tensor core rounds its sums differently from the
//! interpreter's chain of `fma`s, so results are checked against the reference within a
//! tolerance, not bitwise (DESIGN.md §4; docs/PERFORMANCE.md, "Tensor cores").

use onekernel_macros::kernel;

/// Scores, softmax numerators and weighted V of one chunk for the (up to eight) query
/// heads of one KV head, with f16 K and V rows of 128 dimensions: chunks of at most 512
/// tokens where a KV head has at most four query heads, 256 where it has more.
///
/// The query heads, rounded to f16 (to nearest even; magnitudes below 2^-14 become
/// zero), are the columns of B; K and V move in tiles of 64 rows through two shared
/// buffers (three with `stages3`) with 16-byte `async_copy`s, the next tiles (K tiles,
/// then V tiles) copied while one is used. Each of the four groups of 32 invocations
/// scores 16 tokens of a K tile as one `mma_f16` (16 tokens × 128 dimensions by 128 ×
/// the group's heads) into the scores `[head][token]`. After the last K tile the softmax
/// takes the chunk's scores (scaled, masked): per head the maximum, then the numerators
/// `exp(s − m)` (`fast_exp`, the hardware's approximation) rounded to f16 — the values
/// p·v multiplies — and their sum `l` in f32,
/// each over the head's 32 (16 with more than four heads) invocations in a fixed order.
/// Each group then adds, per V tile, its 32 dimensions of `Σ p · v` as two `mma_f16`
/// (16 dimensions × 64 tokens by 64 tokens × the heads, V read transposed). Rows of a
/// last tile past the chunk repeat its last token (finite values) and their numerators
/// are zero. Sequence b's tokens, the chunks and the block table are as in
/// `attn_decode_chunk` with `paged`; no softcap and no ALiBi (the runtime takes the
/// `exact` kernel for those). The result does not depend on `stages3`.
#[kernel(workgroup = 128, fast, variants(paged = [false, true], stages3 = [false, true]))]
pub fn attn_decode_chunk_mma(
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
    // Tiles of 64 rows × 136 f16 values (128 + 8: consecutive rows start 4 banks apart,
    // so the eight rows of one 8 × 8 matrix load hit all 32 banks), in two buffers, or
    // three with `stages3` (two tiles in flight while one is used). 55 KiB in all with
    // two, so that four workgroups share an SM (CUDA: 228 KiB); 72 KiB with three.
    let kv = shared::<u32, { select(stages3, 13056u32, 8704u32) }>();
    // Scores [head][token]: 4 heads × 520 (chunks of up to 512 tokens), or 8 × 260 where
    // a KV head has more than four query heads (chunks of up to 256); the softmax then
    // overwrites them with the scaled, masked values.
    let scores = shared::<f32, 2080u32>();
    // f16 numerators [head][token], two per word: 4 × 520 or 8 × 264 values.
    let pv = shared::<u32, 1056u32>();
    // [8 heads][136] f16 query values, two per word.
    let qh = shared::<u32, 544u32>();
    // [8 heads][128 dimensions] f32 sums Σ p · v; before the V tiles, the softmax's
    // per-invocation maxima (0–127) and sums (128–255).
    let o = shared::<f32, 1024u32>();
    // The cache cell ((page·page_size + slot)·n_kv_heads + kvh) of each row of the tiles.
    let cells = shared::<u32, 512u32>();
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
    let len = kv_len[b];
    let group = n_heads / n_kv_heads;
    let wide = group > 4;
    let chunk = min(chunk_tokens, select(wide, 256u32, 512u32));
    // Row strides: scores (f32) and numerators (f16 values, a multiple of 8).
    let ss = select(wide, 260u32, 520u32);
    let ps = select(wide, 264u32, 520u32);
    let start = c * chunk;
    let end = min(start + chunk, len);
    let n = select(end > start, end - start, 0u32);
    let head0 = kvh * group;
    let tiles = (n + 63) / 64;
    // The block table first: the first tile's copies wait for it.
    for i in (t0..tiles * 64).step_by(WORKGROUP_X) {
        let t = start + min(i, n - 1);
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        cells[i] = (page * page_size + t % page_size) * n_kv_heads + kvh;
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
    for i in (t0..2080u32).step_by(WORKGROUP_X) {
        scores[i] = 0.0;
    }
    barrier();
    // Step s copies tile s (K tiles 0 … tiles − 1, then V tiles) into buffer s % nb and
    // uses tile s − (nb − 1): the copies of nb − 1 tiles travel while one is used.
    let nb = select(stages3, 3u32, 2u32);
    let steps = 2 * tiles;
    let quad = t0 % 16;
    for s in 0..steps + nb - 1 {
        if s < steps {
            let tile = select(s < tiles, s, s - tiles);
            let buf = (s % nb) * 4352;
            for r in (t0 / 16..64u32).step_by(8) {
                let src = cells[tile * 64 + r] * 64 + quad * 4;
                if s < tiles {
                    async_copy(kv, buf + r * 68 + quad * 4, k, src, 4);
                } else {
                    async_copy(kv, buf + r * 68 + quad * 4, v, src, 4);
                }
            }
        }
        async_commit();
        if s + 1 >= nb {
            if stages3 {
                async_wait(2);
            } else {
                async_wait(1);
            }
            barrier();
            let u = s + 1 - nb;
            let buf_h = (u % nb) * 8704;
            if u < tiles {
                mma_f16(scores, u * 64 + 16 * warp, 1, ss, group, kv, buf_h + 16 * warp * 136, 136, false, qh, 0, 136, 128);
            } else {
                if u == tiles {
                    // The softmax: `lph` invocations per head, tokens l, l + lph, …
                    let lph = select(wide, 16u32, 32u32);
                    let h = t0 / lph;
                    let l = t0 % lph;
                    let mut mx = f32::NEG_INFINITY;
                    if h < group {
                        for i in (l..n).step_by(lph) {
                            let mut x = scores[h * ss + i] * scale;
                            if has_mask != 0 {
                                x = x + mask[b * pages_per_seq * page_size + start + i];
                            }
                            scores[h * ss + i] = x;
                            mx = max(mx, x);
                        }
                    }
                    o[t0] = mx;
                    barrier();
                    let mut m = f32::NEG_INFINITY;
                    for j in 0..lph {
                        m = max(m, o[h * lph + j]);
                    }
                    // Numerators of token pairs (2i, 2i + 1), zero past the chunk.
                    let mut ls = 0.0;
                    if h < group {
                        for i in (l..tiles * 32).step_by(lph) {
                            let mut w = 0u32;
                            for e in 0..2u32 {
                                if 2 * i + e < n {
                                    let x = scores[h * ss + 2 * i + e];
                                    let p = to_f16(select(x == f32::NEG_INFINITY, 0.0, fast_exp(x - m)));
                                    ls += f16_bits_to_f32(p);
                                    w = w | (p << (16 * e));
                                }
                            }
                            pv[h * (ps / 2) + i] = w;
                        }
                    }
                    o[WORKGROUP_X + t0] = ls;
                    barrier();
                    if l == 0 && h < group {
                        let mut lsum = 0.0;
                        for j in 0..lph {
                            lsum += o[WORKGROUP_X + h * lph + j];
                        }
                        let row = (b * n_heads + head0 + h) * n_chunks + c;
                        part_m[row] = m;
                        part_l[row] = lsum;
                    }
                    barrier();
                    for i in (t0..1024u32).step_by(WORKGROUP_X) {
                        o[i] = 0.0;
                    }
                    barrier();
                }
                let vt = u - tiles;
                for mt in 0..2u32 {
                    mma_f16(o, 32 * warp + 16 * mt, 1, 128, group, kv, buf_h + 32 * warp + 16 * mt, 136, true, pv, vt * 64, ps, 64);
                }
            }
            barrier();
        }
    }
    if tiles == 0 {
        if t0 < group {
            let row = (b * n_heads + head0 + t0) * n_chunks + c;
            part_m[row] = f32::NEG_INFINITY;
            part_l[row] = 0.0;
        }
        for i in (t0..group * 128).step_by(WORKGROUP_X) {
            part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + i % 128] = 0.0;
        }
    } else {
        for i in (t0..group * 128).step_by(WORKGROUP_X) {
            part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + i % 128] = o[i];
        }
    }
}
