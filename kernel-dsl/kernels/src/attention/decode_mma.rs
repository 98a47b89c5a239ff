//! Decode attention on tensor cores: `attn_decode_chunk_mma`, the `fast`-class
//! counterpart of `attn_decode_chunk` for f16 caches with D = 128.
//!
//! Same grid, inputs and partial results as `attn_decode_chunk` (its module docs), so
//! `attn_decode_combine` merges either; q·k and p·v are `mma_f16` tiles, which is why
//! the kernel is `fast`: a tensor core rounds its sums differently from the
//! interpreter's chain of `fma`s, so results are checked against the reference within a
//! tolerance, not bitwise (DESIGN.md §4; docs/PERFORMANCE.md, "Tensor cores").

use onekernel_macros::kernel;

/// Scores, softmax numerators and weighted V of one chunk of at most 256 tokens for
/// the (up to eight) query heads of one KV head, with f16 K and V rows of 128 dimensions.
///
/// The query heads, rounded to f16 (to nearest even; magnitudes below 2^-14 become
/// zero), are the rows of a 16-row A operand (rows past the group are zeros). K and V
/// move in tiles of 32 rows through three shared buffers (two tiles travelling while one
/// is used; 47 KiB in all, within the 48 KiB of NVIDIA's Vulkan), or with `rows64` in
/// tiles of 64 rows through two (55 KiB), with 16-byte `async_copy`s: K tiles, then V
/// tiles. Each group of 32 invocations scores 16 tokens of a K tile as register tiles,
/// `Sᵀ = Q · Kᵀ` over 128 dimensions, and copies the group's heads into the chunk's
/// scores `[head][token]`. After the last K tile the softmax takes the scores (scaled,
/// masked): per head the maximum, then the numerators `exp(s − m)` (`fast_exp`, the
/// hardware's approximation) rounded to f16 — the values p·v multiplies — and their sum
/// `l` in f32, each over the head's 16 invocations in a fixed order. Each of the four
/// groups then accumulates its 32 dimensions of `Σ p · v` in two register tiles over the
/// V tiles (`Oᵀ`'s rows are dimensions: `Vᵀ · Pᵀ`), stored once at the end. Rows of a
/// last tile past the chunk repeat its last token (finite values) and their numerators
/// are zero. Sequence b's tokens, the chunks and the block table are as in
/// `attn_decode_chunk` with `paged`; no softcap and no ALiBi (the runtime takes the
/// `exact` kernel for those). The result does not depend on `rows64`: the products
/// follow the tokens in the same 16-token steps.
#[kernel(workgroup = 128, fast, variants(paged = [false, true], rows64 = [false, true]))]
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
    // Tiles of 32 rows × 136 f16 values (128 + 8: consecutive rows start 4 banks apart,
    // so the eight rows of one 8 × 8 matrix load hit all 32 banks) in three buffers, or
    // of 64 rows in two.
    let kv = shared::<u32, { select(rows64, 8704u32, 6528u32) }>();
    // Scores [head][token]: 8 heads × 260 (chunks of up to 256 tokens); the softmax then
    // overwrites them with the scaled, masked values. At the end, each group's two
    // accumulator tiles (4 × 512 values) on their way to `part_acc`.
    let scores = shared::<f32, 2080u32>();
    // 16 rows of f16 values, two per word, 264 values apart: first the query heads (rows
    // of the Q tile, 128 values each), then the numerators [head][token] (columns of the
    // Pᵀ tiles). Rows past the group are zeros: the tiles' columns past it are unused.
    let qp = shared::<u32, 2112u32>();
    // Each scoring group's Sᵀ tile (16 × 16); the softmax's per-invocation maxima and
    // sums (0–127, 128–255).
    let stage = shared::<f32, 1024u32>();
    // The cache cell ((page·page_size + slot)·n_kv_heads + kvh) of each token of the
    // chunk, found once: the tiles' copies then wait for no block-table read.
    let cells = shared::<u32, 256u32>();
    let o0 = tile_acc();
    let o1 = tile_acc();
    let s = tile_acc();
    let ta = tile_a();
    let tb = tile_b();
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
    let chunk = min(chunk_tokens, 256u32);
    let start = c * chunk;
    let end = min(start + chunk, len);
    let n = select(end > start, end - start, 0u32);
    let head0 = kvh * group;
    let rows = select(rows64, 64u32, 32u32);
    let tiles = (n + rows - 1) / rows;
    for i in (t0..tiles * rows).step_by(WORKGROUP_X) {
        let t = start + min(i, n - 1);
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        cells[i] = (page * page_size + t % page_size) * n_kv_heads + kvh;
    }
    for i in (t0..2112u32).step_by(WORKGROUP_X) {
        let h = i / 132;
        let w = i % 132;
        let mut bits = 0u32;
        if h < group && w < 64 {
            let row = (b * n_heads + head0 + h) * 128 + 2 * w;
            bits = to_f16(q[row]) | (to_f16(q[row + 1]) << 16);
        }
        qp[i] = bits;
    }
    barrier();
    // Step s copies tile s (K tiles 0 … tiles − 1, then V tiles) into buffer s % nb and
    // uses tile s − (nb − 1).
    let nb = select(rows64, 2u32, 3u32);
    let steps = 2 * tiles;
    let quad = t0 % 16;
    for st in 0..steps + nb - 1 {
        if st < steps {
            let tile = select(st < tiles, st, st - tiles);
            let buf = (st % nb) * rows * 68;
            // Unrolled, so that the rows' copies start together.
            for j in 0..8u32 {
                let r = t0 / 16 + 8 * j;
                if r < rows {
                    let src = cells[tile * rows + r] * 64 + quad * 4;
                    if st < tiles {
                        async_copy(kv, buf + r * 68 + quad * 4, k, src, 4);
                    } else {
                        async_copy(kv, buf + r * 68 + quad * 4, v, src, 4);
                    }
                }
            }
        }
        async_commit();
        if st + 1 >= nb {
            if rows64 {
                async_wait(1);
            } else {
                async_wait(2);
            }
            barrier();
            let u = st + 1 - nb;
            // The tile's first f16 value.
            let buf_h = (u % nb) * rows * 136;
            if u < tiles {
                if warp < rows / 16 {
                    // Sᵀ (16 heads × 16 tokens) = Q · Kᵀ, Kᵀ read from the tile's rows.
                    tile_fill(s, 0.0);
                    for kk in 0..8u32 {
                        tile_load(ta, qp, kk * 16, 264, false);
                        tile_load(tb, kv, buf_h + warp * 16 * 136 + kk * 16, 136, true);
                        tile_mma(s, ta, tb);
                    }
                    tile_store(s, stage, warp * 256, 16, false);
                    for e in (lane..group * 16).step_by(32) {
                        scores[(e / 16) * 260 + u * rows + warp * 16 + e % 16] = stage[warp * 256 + e];
                    }
                }
            } else {
                if u == tiles {
                    // The softmax: 16 invocations per head, tokens l, l + 16, …
                    let h = t0 / 16;
                    let l = t0 % 16;
                    let mut mx = f32::NEG_INFINITY;
                    if h < group {
                        for i in (l..n).step_by(16) {
                            let mut x = scores[h * 260 + i] * scale;
                            if has_mask != 0 {
                                x = x + mask[b * pages_per_seq * page_size + start + i];
                            }
                            scores[h * 260 + i] = x;
                            mx = max(mx, x);
                        }
                    }
                    stage[t0] = mx;
                    barrier();
                    let mut m = f32::NEG_INFINITY;
                    for j in 0..16u32 {
                        m = max(m, stage[h * 16 + j]);
                    }
                    // Numerators of token pairs (2i, 2i + 1), zero past the chunk; the
                    // query values they replace were last read before the barrier above.
                    let mut ls = 0.0;
                    if h < group {
                        for i in (l..tiles * rows / 2).step_by(16) {
                            let mut w = 0u32;
                            for e in 0..2u32 {
                                if 2 * i + e < n {
                                    let x = scores[h * 260 + 2 * i + e];
                                    let p = to_f16(select(x == f32::NEG_INFINITY, 0.0, fast_exp(x - m)));
                                    ls += f16_bits_to_f32(p);
                                    w = w | (p << (16 * e));
                                }
                            }
                            qp[h * 132 + i] = w;
                        }
                    }
                    stage[WORKGROUP_X + t0] = ls;
                    barrier();
                    if l == 0 && h < group {
                        let mut lsum = 0.0;
                        for j in 0..16u32 {
                            lsum += stage[WORKGROUP_X + h * 16 + j];
                        }
                        let row = (b * n_heads + head0 + h) * n_chunks + c;
                        part_m[row] = m;
                        part_l[row] = lsum;
                    }
                    tile_fill(o0, 0.0);
                    tile_fill(o1, 0.0);
                }
                // Oᵀ (16 dimensions × 16 heads) += Vᵀ · Pᵀ over the tile's tokens: Vᵀ is
                // the tile read by columns, Pᵀ the numerators by columns.
                let vt = u - tiles;
                for kk in 0..rows / 16 {
                    tile_load(tb, qp, vt * rows + kk * 16, 264, true);
                    tile_load(ta, kv, buf_h + kk * 16 * 136 + warp * 32, 136, true);
                    tile_mma(o0, ta, tb);
                    tile_load(ta, kv, buf_h + kk * 16 * 136 + warp * 32 + 16, 136, true);
                    tile_mma(o1, ta, tb);
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
        // Each group's tiles [dimension][head] through the scores, then the group's heads.
        tile_store(o0, scores, warp * 512, 16, false);
        tile_store(o1, scores, warp * 512 + 256, 16, false);
        barrier();
        for i in (t0..group * 128).step_by(WORKGROUP_X) {
            let d = i % 128;
            part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + d] = scores[(d / 16) * 256 + (d % 16) * 16 + i / 128];
        }
    }
}
