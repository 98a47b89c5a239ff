//! Decode attention on tensor cores: `attn_decode_chunk_mma`, the `fast`-class
//! counterpart of `attn_decode_chunk` for f16 caches with D = 128.
//!
//! Same grid, inputs and partial results as `attn_decode_chunk` (its module docs), so
//! `attn_decode_combine` merges either; q·k and p·v are register tiles and the softmax
//! is online on their slots, which is why the kernel is `fast`: a tensor core rounds its
//! sums differently from the interpreter's chain of `fma`s and the exponentials are the
//! hardware's, so results are checked against the reference within a tolerance, not
//! bitwise (DESIGN.md §4; docs/PERFORMANCE.md, "Tensor cores").

use onekernel_macros::kernel;

/// Partial attention of the (up to sixteen) query heads of one KV head over one chunk of
/// tokens (any length), with f16 K and V rows of 128 dimensions.
///
/// The query heads, rounded to f16 (`f32_to_f16_bits`: to nearest even, as an f16 store
/// rounds), are the rows of a 16-row A operand (rows past the group are zeros). K and V
/// move in blocks of 64 tokens through `stages` shared buffers of 34 KiB (1: 44.75 KiB in
/// all, within the 48 KiB of NVIDIA's Vulkan; 2 or 3: CUDA, blocks travelling while one
/// is used) with 16-byte `async_copy`s, the block table read once per token by one
/// invocation while the block before it is used (with two or more buffers a step before
/// that, its page held in a register). Each group of 32 invocations takes 16
/// tokens of every block, FlashAttention-2's split: `S = Q · Kᵀ` (heads × tokens) as a
/// register tile, the scaled and masked scores on its slots (`tile_get`), a running
/// maximum per head in log2 units that moves only when some head passes it by more than
/// 8, the numerators `2^(s · scale · log2 e − m)` (`fast_exp2`) summed before they are
/// rounded to f16 as the A operand of `O += P · V` (`tile_set`), O in eight register
/// tiles. At the end the four groups' maxima, sums and O tiles meet in shared memory and
/// are merged in group order into the chunk's partial results (the maximum in natural
/// units, as `attn_decode_chunk` writes it). Tokens of a last block past the chunk
/// repeat its last token (finite values) and get no weight. Sequence b's tokens, the
/// chunks and the block table are as in `attn_decode_chunk` with `paged`; no softcap and
/// no ALiBi (the runtime takes the `exact` kernel for those); the scale must be positive
/// (heads' maxima are taken before it). The result does not depend on `stages`: every
/// group follows the same tokens in the same steps.
///
/// With `finish` the decode step is this one launch: the kernel also does what
/// `attn_decode_combine` does, with the same operations in the same order (so the same
/// bits), and writes `out` (`[B][Hq][128]`). In a launch of one chunk per sequence
/// (`n_chunks` 1) it weighs the chunk against the head's sink and normalizes, and
/// `part_*` are not written. With two to four chunks per sequence, each chunk with tokens
/// writes its partial results and arrives at the counter of its sequence and KV head in
/// `arrivals` (zeros before the first launch; the last arrival leaves them zero), and
/// the last of them merges the sequence's chunks for the KV head's query heads, as the
/// combine would (one merge reads all of them, so more chunks are the combine's: beyond
/// four, `finish` writes the partial results only and the runtime launches the combine).
#[kernel(workgroup = 128, fast, resident = 2, variants(paged = [false, true], stages = [1u32, 2, 3], finish = [false, true]))]
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
    #[len(select(has_sinks != 0, n_heads, 1))] sinks: &[f32],
    #[len(select(finish, num_groups().z * n_heads * 128, 1))] out: &mut [f32],
    #[len(select(finish, num_groups().z * n_kv_heads, 1))] arrivals: &mut [u32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] pages_per_seq: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] scale: f32,
    #[push] has_mask: u32,
    #[push] has_sinks: u32,
    // A spec constant, so that the compiler divides by it with shifts (a power of two)
    // or a constant's multiply: the division by a push constant in the next block's
    // cells cost `attn_prefill_mma` 6–10 % of its step on the H200 (docs/PERFORMANCE.md).
    #[spec(default = 16)] page_size: u32,
) {
    // K then V rows of a block (rows of 136 f16 values: 128 + 8, so that the eight rows
    // of one 8 × 8 matrix load start 4 banks apart and hit all 32 banks), per buffer. At
    // the end, each group's O rows (f32 bits) and its heads' maxima and sums.
    let kv = shared::<u32, { stages * 8704u32 }>();
    // The Q tile: 16 rows of 136 f16 values.
    let qs = shared::<u32, 1088u32>();
    // Where a backend reaches tiles' values only through memory (GLSL, MSL; CUDA reads
    // its registers and leaves these unused): each group's S and O tiles' slots (16 × 16
    // f32) and its numerators as an A operand (16 × 16 f16).
    let sc = shared::<f32, 1024u32>();
    let ps = shared::<u32, 512u32>();
    // The cache cells of a block's tokens, two blocks' worth.
    let cells = shared::<u32, 128u32>();
    let s = tile_acc();
    // O: 16 heads × 128 dimensions, 16 dimensions per tile.
    let o = [tile_acc(); 8];
    let ta = tile_a();
    let tb = tile_b();
    let c = group_id().x;
    let kvh = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    let warp = t0 / 32;
    let len = kv_len[b];
    let group = n_heads / n_kv_heads;
    let start = c * chunk_tokens;
    let end = min(start + chunk_tokens, len);
    let n = select(end > start, end - start, 0u32);
    let head0 = kvh * group;
    // `finish` acts only where the launch has one chunk per sequence (as the runtime
    // launches it); otherwise the variant writes the partial results as the other does.
    let finishes = finish && n_chunks == 1;
    // The sequence's chunks that have tokens, which arrive and are merged by the last.
    let merges = finish && n_chunks > 1 && n_chunks <= 4;
    let used = min((len + max(chunk_tokens, 1u32) - 1) / max(chunk_tokens, 1u32), n_chunks);
    if n == 0 && (finishes || (merges && len == 0 && c == 0)) {
        // An empty sequence: the combine's result with no chunk (0 · 1/sink weight).
        for i in (t0..group * 128).step_by(WORKGROUP_X) {
            let mut total = 0.0;
            if has_sinks != 0 {
                let sink = sinks[head0 + i / 128];
                total += exp(sink - max(f32::NEG_INFINITY, sink));
            }
            out[(b * n_heads + head0) * 128 + i] = 0.0 * recip(total);
        }
        return;
    }
    if n == 0 && merges {
        // Not one of the sequence's chunks: the merge reads only those.
        return;
    }
    if n == 0 {
        // A chunk past this sequence's end (another sequence of the batch is longer).
        if t0 < group {
            let row = (b * n_heads + head0 + t0) * n_chunks + c;
            part_m[row] = f32::NEG_INFINITY;
            part_l[row] = 0.0;
        }
        for i in (t0..group * 128).step_by(WORKGROUP_X) {
            part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + i % 128] = 0.0;
        }
        return;
    }
    // Token `t`'s page, and its cache cell `(page · page_size + slot) · n_kv_heads + kvh`
    // in that page.
    let page_of = |t: u32, b: u32| -> u32 {
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        page
    };
    let cell_at = |page: u32, t: u32, kvh: u32| -> u32 { (page * page_size + t % page_size) * n_kv_heads + kvh };
    // Blocks of 64 tokens; tokens past the chunk repeat its last.
    let nblk = (n + 63) / 64;
    for i in (t0..1088u32).step_by(WORKGROUP_X) {
        let h = i / 68;
        let w = i % 68;
        let mut bits = 0u32;
        if h < group && w < 64 {
            let row = (b * n_heads + head0 + h) * 128 + 2 * w;
            bits = f32_to_f16_bits(q[row]) | (f32_to_f16_bits(q[row + 1]) << 16);
        }
        qs[i] = bits;
    }
    // With two or more buffers the cells of the block after the next are found one step
    // ahead of their use: an invocation reads its token's page from the block table in
    // one step and writes the cell in the next, so the read's latency passes under a
    // step's products (as in `attn_prefill_mma`). The one-buffer form (NVIDIA's Vulkan)
    // reads and writes in one step: read a step ahead, it ran 2–5 % slower there
    // (docs/PERFORMANCE.md).
    let mut pg = 0u32;
    if t0 < 64 {
        let tok = start + min(t0, n - 1);
        let p0 = page_of(tok, b);
        cells[t0] = cell_at(p0, tok, kvh);
        if stages >= 2 && nblk > 1 {
            let p1 = page_of(start + min(64 + t0, n - 1), b);
            pg = p1;
        }
    }
    barrier();
    // Each slot's head (row) and its token within the group's 16 (column).
    let mut rows = [0u32; 8];
    let mut cols = [0u32; 8];
    tile_coords(rows, cols);
    let sb = warp * 256;
    // Per row this invocation holds (slot e's is `(e / 2) % 2`: docs/DSL.md, "Element
    // access"), its head's running maximum (log2 units), the value the numerators
    // subtract, and this invocation's part of the head's sum. Two of each rather than
    // one per slot: NVIDIA's Vulkan compiler then holds the kernel in fewer registers.
    let mut m_row = [f32::NEG_INFINITY; 2];
    let mut m_use = [0.0; 2];
    let mut l_part = [0.0; 2];
    let mut fac = [0.0; 2];
    let scale2 = scale * 1.442695041;
    let inv_scale = 1.0 / scale;
    let mut f = [0.0; 8];
    let mut mx = [0.0; 8];
    let mut ov = [0.0; 8];
    // Step st copies block st into buffer st % stages and uses block st − (stages − 1).
    // With two or more buffers, the step first waits for the block it uses and meets the
    // other groups, which have then also finished the block before it, whose buffer
    // block st takes: one barrier per block. With one, the block is copied, waited for
    // and used, and a barrier closes the step. Every step after the first starts with a
    // barrier, past which the cells the previous step found are read.
    for st in 0..nblk + stages - 1 {
        if stages >= 2 && st + 1 >= stages {
            if stages == 3 {
                async_wait(1);
            } else {
                async_wait(0);
            }
            barrier();
        } else if st >= 1 {
            // Filling the pipeline: the cells the previous step found, for this step's
            // copies.
            barrier();
        }
        if st < nblk {
            let buf = (st % stages) * 8704;
            // Unrolled, so that the rows' copies start together: 16 copies of 16 bytes
            // per row, each invocation the same quad of rows t0 / 16 + 8j of K and V.
            // The rows' cells are read first: where a copy is a load and a store
            // (Vulkan), NVIDIA's compiler keeps a shared read after the shared stores
            // before it, so reading each cell between the copies made every load wait
            // for the one before (docs/PERFORMANCE.md, "Decode attention").
            let mut srcs = [0u32; 8];
            for j in 0..8u32 {
                srcs[j] = cells[(st % 2) * 64 + t0 / 16 + 8 * j] * 64 + (t0 % 16) * 4;
            }
            for j in 0..8u32 {
                let r = t0 / 16 + 8 * j;
                let quad = t0 % 16;
                async_copy(kv, buf + r * 68 + quad * 4, k, srcs[j], 4);
                async_copy(kv, buf + (64 + r) * 68 + quad * 4, v, srcs[j], 4);
            }
            // Read by the next step's copies, after its barrier (or this step's last).
            if st + 1 < nblk && t0 < 64 {
                let tok = start + min((st + 1) * 64 + t0, n - 1);
                if stages >= 2 {
                    cells[((st + 1) % 2) * 64 + t0] = cell_at(pg, tok, kvh);
                    if st + 2 < nblk {
                        let pn = page_of(start + min((st + 2) * 64 + t0, n - 1), b);
                        pg = pn;
                    }
                } else {
                    let pn = page_of(tok, b);
                    cells[((st + 1) % 2) * 64 + t0] = cell_at(pn, tok, kvh);
                }
            }
        }
        async_commit();
        if stages == 1 {
            async_wait(0);
            barrier();
        }
        if st + 1 >= stages {
            let u = st + 1 - stages;
            // The group's first K row and V row of the block (f16 units).
            let kbase = (u % stages) * 17408 + warp * 16 * 136;
            let vbase = kbase + 64 * 136;
            // S (16 heads × the group's 16 tokens) = Q · Kᵀ, Kᵀ read from K's rows.
            tile_fill(s, 0.0);
            for kk in 0..8u32 {
                tile_load(ta, qs, kk * 16, 136, false);
                tile_load(tb, kv, kbase + kk * 16, 136, true);
                tile_mma(s, ta, tb);
            }
            tile_get(f, s, sc, sb, 16);
            // Tokens past the chunk get no weight; the mask is added over the scale.
            if u * 64 + 64 > n {
                for e in 0..8u32 {
                    f[e] = select(u * 64 + warp * 16 + cols[e] >= n, f32::NEG_INFINITY, f[e]);
                }
            }
            if has_mask != 0 {
                let mrow = b * pages_per_seq * page_size + start;
                for e in 0..8u32 {
                    f[e] = f[e] + mask[mrow + min(u * 64 + warp * 16 + cols[e], n - 1)] * inv_scale;
                }
            }
            for e in 0..8u32 {
                mx[e] = f[e];
            }
            tile_row_max(mx);
            // How far the group's heads passed their running maxima (log2 units; every
            // head at the first block, whose maxima are −∞).
            for e in 0..8u32 {
                mx[e] = mx[e] * scale2;
                ov[e] = select(mx[e] == f32::NEG_INFINITY, f32::NEG_INFINITY, mx[e] - m_row[(e / 2) % 2]);
            }
            tile_all_max(ov);
            if u == 0 || ov[0] > 8.0 {
                // Row i's slots include slot 2i.
                for i in 0..2u32 {
                    let m_new = max(m_row[i], mx[2 * i]);
                    // The row's factor for O.
                    fac[i] = select(m_row[i] == f32::NEG_INFINITY, 0.0, fast_exp2(m_row[i] - m_new));
                    l_part[i] = l_part[i] * fac[i];
                    m_row[i] = m_new;
                    // A head with no token yet subtracts 0, so that its −∞ scores give 0.
                    m_use[i] = select(m_new == f32::NEG_INFINITY, 0.0, m_new);
                }
                if u > 0 {
                    for j in 0..8u32 {
                        tile_get(ov, o[j], sc, sb, 16);
                        for e in 0..8u32 {
                            ov[e] = ov[e] * fac[(e / 2) % 2];
                        }
                        tile_set(o[j], ov, sc, sb, 16);
                    }
                } else {
                    for j in 0..8u32 {
                        tile_fill(o[j], 0.0);
                    }
                }
            }
            // The numerators, at most 2^8; the sums add them before they are rounded to
            // f16 as the A operand of P · V (as FlashAttention does).
            for e in 0..8u32 {
                f[e] = fast_exp2(f[e] * scale2 - m_use[(e / 2) % 2]);
                l_part[(e / 2) % 2] += f[e];
            }
            tile_set(ta, f, ps, sb, 16);
            // O (16 heads × 128 dimensions) += P · V over the group's 16 tokens.
            for j in 0..8u32 {
                tile_load(tb, kv, vbase + 16 * j, 136, false);
                tile_mma(o[j], ta, tb);
            }
            if stages == 1 {
                barrier();
            }
        }
    }
    // Each head's sum over the group's tokens; then every group's heads (rows below the
    // group) to shared memory, past the last block's use of it: per group 16 rows of
    // 128 O values, then 16 maxima and 16 sums.
    // Slots 0 and 2 carry the rows' parts (the same row's two where an invocation holds
    // one), the others add nothing.
    let mut l_row = [0.0; 8];
    l_row[0] = l_part[0];
    l_row[2] = l_part[1];
    tile_row_sum(l_row);
    if stages >= 2 {
        barrier();
    }
    let gb = warp * 2080;
    for j in 0..8u32 {
        tile_get(ov, o[j], sc, sb, 16);
        for e in 0..8u32 {
            if rows[e] < group {
                kv[gb + rows[e] * 128 + 16 * j + cols[e]] = ov[e].to_bits();
            }
            // With the last tile, one slot of each row (column 0) writes the head's
            // maximum and sum (here rather than in a loop of its own, where ptxas
            // schedules the stores differently).
            if j == 7 && rows[e] < group && cols[e] == 0 {
                kv[gb + 2048 + rows[e]] = m_row[(e / 2) % 2].to_bits();
                kv[gb + 2064 + rows[e]] = l_row[e].to_bits();
            }
        }
    }
    barrier();
    // The chunk's partial results: the groups merged in order 0 … 3 against their
    // largest maximum (a group whose tokens all got no weight has −∞ and adds nothing).
    // What a head's dimensions share is found once per head: the groups' weights at
    // kv[8320 + 4h + g] and, finishing, the chunk's weight and 1 / total at kv[8384 + h]
    // and kv[8400 + h] (past the groups' 4 × 2080 words).
    if t0 < group {
        let h = t0;
        let mut top = f32::NEG_INFINITY;
        for g in 0..4u32 {
            top = max(top, f32::from_bits(kv[g * 2080 + 2048 + h]));
        }
        let mut l = 0.0;
        for g in 0..4u32 {
            let mg = f32::from_bits(kv[g * 2080 + 2048 + h]);
            // The hardware's 2^x (one instruction on CUDA, where the portable `exp2` is
            // about 160 and four of them sat in the step's tail): the kernel is `fast`,
            // and the partial results, not these weights, are what the combine reads.
            let w = select(mg == f32::NEG_INFINITY, 0.0, fast_exp2(mg - top));
            kv[8320 + 4 * h + g] = w.to_bits();
            l += f32::from_bits(kv[g * 2080 + 2064 + h]) * w;
        }
        let m = top * 0.6931471806;
        if finishes {
            // `attn_decode_combine` with this one chunk: its maximum against the sink,
            // the chunk's weight, the sum (`fma` with 0, as the combine accumulates).
            let mut sink = f32::NEG_INFINITY;
            if has_sinks != 0 {
                sink = sinks[head0 + h];
            }
            let big = max(m, sink);
            let w = select(m == f32::NEG_INFINITY, 0.0, exp(m - big));
            let mut total = fma(l, w, 0.0);
            if has_sinks != 0 {
                total += exp(sink - big);
            }
            kv[8384 + h] = w.to_bits();
            kv[8400 + h] = recip(total).to_bits();
        } else {
            let row = (b * n_heads + head0 + h) * n_chunks + c;
            part_m[row] = m;
            part_l[row] = l;
        }
    }
    barrier();
    for i in (t0..group * 128).step_by(WORKGROUP_X) {
        let h = i / 128;
        let d = i % 128;
        let mut acc = 0.0;
        for g in 0..4u32 {
            acc += f32::from_bits(kv[g * 2080 + h * 128 + d]) * f32::from_bits(kv[8320 + 4 * h + g]);
        }
        if finishes {
            // The chunk lanes' sum of the combine, whose added zeros turn −0 into +0.
            let a = fma(acc, f32::from_bits(kv[8384 + h]), 0.0) + 0.0;
            out[(b * n_heads + head0 + h) * 128 + d] = a * f32::from_bits(kv[8400 + h]);
        } else {
            part_acc[((b * n_heads + head0 + h) * n_chunks + c) * 128 + d] = acc;
        }
    }
    if merges {
        let last = last_arrival(arrivals, b * n_kv_heads + kvh, used);
        if last {
            // `attn_decode_combine` for the group's heads over the `used` chunks, its
            // operations in its order: per head the largest maximum (and sink), each
            // chunk's weight, the sum as one `fma` chain in chunk order; per dimension
            // its four lanes of ⌈used / 4⌉ = 1 chunk, added in lane order. Weights at
            // kv[4h + chunk], each head's 1 / total at kv[64 + h] (the blocks are done
            // with).
            if t0 < group {
                let row = (b * n_heads + head0 + t0) * n_chunks;
                let mut big = f32::NEG_INFINITY;
                for c2 in 0..4u32 {
                    if c2 < used {
                        big = max(big, part_m[row + c2]);
                    }
                }
                if has_sinks != 0 {
                    big = max(big, sinks[head0 + t0]);
                }
                let mut total = 0.0;
                for c2 in 0..4u32 {
                    if c2 < used {
                        let mc = part_m[row + c2];
                        let w = select(mc == f32::NEG_INFINITY, 0.0, exp(mc - big));
                        kv[4 * t0 + c2] = w.to_bits();
                        total = fma(part_l[row + c2], w, total);
                    }
                }
                if has_sinks != 0 {
                    total += exp(sinks[head0 + t0] - big);
                }
                kv[64 + t0] = recip(total).to_bits();
            }
            barrier();
            // Unrolled (16 × 128 covers 16 heads), so that every chunk's values are
            // requested before any is added.
            for j in 0..16u32 {
                let i = t0 + j * WORKGROUP_X;
                if i < group * 128 {
                    let h = i / 128;
                    let d = i % 128;
                    let row = (b * n_heads + head0 + h) * n_chunks;
                    let mut a = 0.0;
                    for c2 in 0..4u32 {
                        let mut acc = 0.0;
                        if c2 < used {
                            acc = fma(part_acc[(row + c2) * 128 + d], f32::from_bits(kv[4 * h + c2]), acc);
                        }
                        a = select(c2 == 0, acc, a + acc);
                    }
                    out[(b * n_heads + head0 + h) * 128 + d] = a * f32::from_bits(kv[64 + h]);
                }
            }
        }
    }
}
