//! Prefill attention on tensor cores: `attn_prefill_mma`, the `fast` mode of causal
//! prefill (FlashAttention-2's tiling with the DSL's register tiles) for f16 caches with
//! D = 128.
//!
//! The exact mode runs every query as a decode row (docs/RUNTIME.md, "Prefill"), so each
//! query reads its whole prefix on its own. Here a workgroup takes two row tiles of 64
//! consecutive queries that read the same tokens (two query heads of one KV head, or two
//! query blocks of one head) and reads each K/V block once for both: `S = Q · Kᵀ` and `O += P · V`
//! are register tiles, the softmax is online (a running maximum per query row) on the
//! tiles' slots (`tile_get`, `tile_set`: registers on CUDA), and
//! blocks past the last query's position are never read. Class `fast`: tensor cores sum
//! in their own order, P is rounded to f16 and `exp` is the hardware's, so the result is
//! within a tolerance of the reference, not bitwise (DESIGN.md §4).

use onekernel_macros::kernel;

/// Causal attention of two row tiles of 64 consecutive new queries over the sequence's
/// cache, f16 K and V rows of 128 dimensions (docs/RUNTIME.md, "Prefill").
///
/// The workgroup's two halves (128 invocations each) hold one row tile each and share
/// the K/V blocks: every block is copied once for 128 rows of products, half the copies
/// and L2 traffic per product of one tile per workgroup (docs/PERFORMANCE.md, "Two row
/// tiles per workgroup"). With `pair_heads` (the runtime's choice where each KV head has
/// an even number of query heads) half `hf` takes query head `2x + hf` at query block
/// `y`: both halves see the same tokens. Otherwise it takes head `x` at query block
/// `2y + hf`, and the first half drops the later block's tokens past its queries as the
/// causal limit drops any. Grid: x the head pair (or head), y the query block (or pair
/// of blocks; group y takes `num_groups().y − 1 − y`, the heaviest first), z the
/// sequence. The scheduler starts workgroups x fastest, so each sequence's blocks start
/// heaviest first across all its heads, a longest-first list schedule (head-major, a
/// sequence's last heads began their heaviest blocks last; docs/PERFORMANCE.md,
/// "Prefill attention"). Sequence b has
/// `q_tokens[b]` new queries; query t sits at position `kv_len[b] − q_tokens[b] + t` and
/// sees tokens `0 …` that position. Its row of `q` starts at `(q_start[b] + t) ·
/// q_token_stride + h · q_head_stride` (any padded or interleaved layout; `q_start` the
/// cumulative offsets of a varlen batch), its output row likewise in `out`; the strides
/// are even (Q values and outputs move in pairs, 8 bytes at a time). Query head h
/// reads KV head `h / (n_heads / n_kv_heads)`; pages and the block table are decode's.
///
/// The queries, rounded to f16 (to nearest even, as an f16 store rounds), are the rows
/// of the Q tiles, loaded straight into eight A tiles per group of 32 invocations (16
/// rows each, `tile_set`). K and V move in blocks of 64
/// tokens through two buffers with 16-byte asynchronous copies past L1
/// (`async_copy_bypass_l1`; `kv64`: CUDA, 103 KiB of shared memory, one workgroup per
/// SM), or of 32 tokens through one (41.25 KiB, within the 48 KiB of NVIDIA's Vulkan).
/// With `kv64` the blocks are panels and the products `tile_mma_panel`s (`wgmma` on
/// Hopper, one per half: docs/DSL.md "Panels"), and S runs while the next block's
/// copies are issued. Per
/// block, each group computes its
/// 16 × block scores as register tiles and works on their slots (`tile_get`): CUDA in
/// its registers, GLSL and MSL through the `sc` scratch. Tokens past a query's position
/// are dropped (in the blocks that reach past the workgroup's first query) and the mask
/// is added; each row's maximum comes from `tile_row_max`. The running maximum, in log2
/// units, moves only when some row of the group passes it by more than 8 (and at the
/// first block); then O's slots and the row sums are rescaled by `2^(m_old − m_new)`.
/// The numerators `2^(s · scale · log2 e − m)` (`fast_exp2`, at most 2^8) become the A
/// operand of `O += P · V` by `tile_set` (rounded to f16; through the `ps` scratch where
/// a backend must); the row sums add them before rounding (as FlashAttention does). At
/// the end the sinks join the sums (as the decode combine does) and each row is divided
/// by its sum. The scale must be positive: rows' maxima are taken before it.
#[kernel(workgroup = 256, fast, resident = 1, variants(paged = [false, true], kv64 = [false, true]))]
pub fn attn_prefill_mma(
    #[len(q_len)] q: &[f32],
    #[len(n_kv_heads * 64)] k: &[u32],
    #[len(n_kv_heads * 64)] v: &[u32],
    #[len(select(paged, num_groups().z * pages_per_seq, 1))] block_table: &[i32],
    #[len(num_groups().z)] kv_len: &[u32],
    #[len(num_groups().z)] q_tokens: &[u32],
    #[len(num_groups().z)] q_start: &[u32],
    #[len(select(has_mask != 0, num_groups().z * pages_per_seq * page_size, 1))] mask: &[f16],
    #[len(select(has_sinks != 0, n_heads, 1))] sinks: &[f32],
    #[len(out_len)] out: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] pages_per_seq: u32,
    #[push] q_token_stride: u32,
    #[push] q_head_stride: u32,
    #[push] out_token_stride: u32,
    #[push] out_head_stride: u32,
    #[push] q_len: u32,
    #[push] out_len: u32,
    #[push] scale: f32,
    #[push] has_mask: u32,
    #[push] has_sinks: u32,
    #[push] pair_heads: u32,
    // A spec constant, so that the compiler divides by it with shifts (a power of two)
    // or a constant's multiply: the division by a push constant in the next block's
    // cells cost 6–10 % of the step on the H200 (docs/PERFORMANCE.md).
    #[spec(default = 16)] page_size: u32,
) {
    // K then V rows of a block (rows of 136 f16 values: 128 + 8, so that the eight rows
    // of one 8 × 8 matrix load start 4 banks apart and hit all 32 banks), in two buffers
    // with `kv64`.
    let kv = shared::<u32, { select(kv64, 17408u32, 4352u32) }>();
    // Where a backend reaches tiles' values only through memory (GLSL, MSL; CUDA reads
    // its registers and leaves these unused): each group's score and O tiles' slots, 16
    // rows of `scs` f32 (68 with `kv64`, else 32), and its numerators as A operands, 16
    // rows of `pw` words of f16 pairs (36 with `kv64`, else 16).
    let sc = shared::<f32, { select(kv64, 8704u32, 4096u32) }>();
    let ps = shared::<u32, { select(kv64, 4608u32, 2048u32) }>();
    // The cache cells of the next block's tokens, found by one invocation each while the
    // current block is used (the block table's division once per token, not once per
    // copy); two blocks' worth.
    let cells = shared::<u32, { select(kv64, 128u32, 64u32) }>();
    let s0 = tile_acc();
    let s1 = tile_acc();
    let s2 = tile_acc();
    let s3 = tile_acc();
    // O: 16 rows × 128 dimensions per group, 16 dimensions per tile.
    let o = [tile_acc(); 8];
    let ta = tile_a();
    let tb = tile_b();
    // The group's Q rows as eight A operands (16 dimensions each), loaded once; with
    // `kv64` the block's numerators as four (`ta` the first), all read by
    // `tile_mma_panel`.
    let qa = [tile_a(); 8];
    let p1 = tile_a();
    let p2 = tile_a();
    let p3 = tile_a();
    // Token `tok`'s page, and its cache cell in that page.
    let page_of = |tok: u32, b: u32| -> u32 {
        let logical = b * pages_per_seq + tok / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        page
    };
    let cell_at = |page: u32, tok: u32, kvh: u32| -> u32 { (page * page_size + tok % page_size) * n_kv_heads + kvh };
    let b = group_id().z;
    let t0 = local_id().x;
    let warp = t0 / 32;
    // The workgroup's half (four groups, one row tile of 64 queries) and, for half `hf`,
    // its query head and first query: heads 2x + hf of query block y with `pair_heads`
    // (two heads of one KV head), else head x, query block 2y + hf.
    let half = warp / 4;
    let head_of = |hf: u32| -> u32 { select(pair_heads != 0, 2 * group_id().x + hf, group_id().x) };
    let first_of =
        |hf: u32| -> u32 { (num_groups().y - 1 - group_id().y) * select(pair_heads != 0, 64u32, 128u32) + select(pair_heads != 0, 0u32, 64 * hf) };
    let h = head_of(half);
    let first = first_of(half);
    let tq = q_tokens[b];
    let len = kv_len[b];
    if first_of(0) >= tq {
        return;
    }
    let kvh = head_of(0) / (n_heads / n_kv_heads);
    let kb = select(kv64, 64u32, 32u32);
    let nb = select(kv64, 2u32, 1u32);
    let scs = select(kv64, 68u32, 32u32);
    let pw = select(kv64, 36u32, 16u32);
    // Position of query 0; blocks 0 … nblk − 1 hold tokens up to the last query's of
    // either half (a half whose queries all lie past the last, or before a block, drops
    // that block's tokens as any query past its position does).
    let pos0 = len - tq;
    let nblk = (pos0 + min(first_of(1) + 63, tq - 1)) / kb + 1;
    // Each slot's query row (rows past the last query repeat it: finite values, never
    // written), its position, and its column within a 16-token tile.
    let mut rows = [0u32; 8];
    let mut cols = [0u32; 8];
    tile_coords(rows, cols);
    let sb = warp * 16 * scs;
    let pb = warp * 16 * pw;
    // The cells of the block after the next are found one step ahead of their use: an
    // invocation reads its token's page from the block table in one step and writes the
    // cell in the next, so the read's latency passes under a step's products.
    let mut pg = 0u32;
    if t0 < kb {
        let tok = min(t0, len - 1);
        let p0 = page_of(tok, b);
        cells[t0] = cell_at(p0, tok, kvh);
        if nblk > 1 {
            let p1 = page_of(min(kb + t0, len - 1), b);
            pg = p1;
        }
    }
    // The Q rows go straight into each group's eight A tiles, no staging: slot e of tile
    // kk is the group's query row `rows[e]`, dimension 16·kk + `cols[e]`, and slots 2k and
    // 2k + 1 are neighbouring columns of one row, one 8-byte load (the strides are even).
    // Every value is loaded before any is converted, so that all the loads issue
    // together: with each pair converted as it arrived, NVIDIA's compiler once issued no
    // pair's loads before the pair before had its values (docs/PERFORMANCE.md, "Prefill
    // attention").
    let mut qv = [0.0; 64];
    for kk in 0..8u32 {
        for k2 in 0..4u32 {
            let t = min(first + (warp % 4) * 16 + rows[2 * k2], tq - 1);
            let at = (q_start[b] + t) * q_token_stride + h * q_head_stride + 16 * kk + cols[2 * k2];
            load_words(qv, 8 * kk + 2 * k2, q, at, 2);
        }
    }
    // Rounded to f16 by `tile_set` (to nearest even, as `f32_to_f16_bits`), through the
    // `ps` scratch where a backend must.
    let mut qt = [0.0; 8];
    for kk in 0..8u32 {
        for e in 0..8u32 {
            qt[e] = qv[8 * kk + e];
        }
        tile_set(qa[kk], qt, ps, 2 * pb, 2 * pw);
    }
    // The first block's cells, for every invocation's copies.
    barrier();
    // Per row this invocation holds (slot e's is `(e / 2) % 2`, and row i's slots include
    // slot 2i: docs/DSL.md, "Element access"), its position. Two values rather than one
    // per slot, as the softmax state below: fewer registers on NVIDIA's Vulkan compiler.
    let mut pos = [0u32; 2];
    for i in 0..2u32 {
        pos[i] = pos0 + min(first + (warp % 4) * 16 + rows[2 * i], tq - 1);
    }
    // Per row, its running maximum, the value the numerators subtract and this
    // invocation's part of the row's sum.
    let mut m_row = [f32::NEG_INFINITY; 2];
    let mut m_use = [0.0; 2];
    let mut l_part = [0.0; 2];
    let mut fac = [0.0; 2];
    // The scale in log2 units: the numerators are powers of 2. The mask is added to the
    // unscaled scores over the scale.
    let scale2 = scale * 1.442695041;
    let inv_scale = 1.0 / scale;
    let mut f0 = [0.0; 8];
    let mut f1 = [0.0; 8];
    let mut f2 = [0.0; 8];
    let mut f3 = [0.0; 8];
    let mut mx = [0.0; 8];
    let mut ov = [0.0; 8];
    // O starts at zero here, not in the first block's branch below: filled there, every
    // block's step ended in a merge of O's fresh and rescaled values, for which ptxas
    // copied all 64 of O's registers at every block (the accumulators of `wgmma` stay in
    // fixed registers; 255 registers in all, 224 without; docs/PERFORMANCE.md).
    for j in 0..8u32 {
        tile_fill(o[j], 0.0);
    }
    // Step st copies block st into buffer st % nb and uses block st − (nb − 1). With two
    // buffers, the step first waits for block st − 1 and meets the other groups, which
    // have then also finished block st − 2, whose buffer block st takes: one barrier per
    // block, and block st travels while block st − 1 is used. With one buffer, the block
    // is copied, waited for and used, and a barrier closes the step.
    //
    // With `kv64` the products run while other work is issued: the step first completes
    // the previous block's `P · V` (whose V buffer this step's copies refill), starts
    // `S = Q · Kᵀ` of its block, issues the next block's copies, and only then waits for
    // S; its own `P · V` completes at the next step's start.
    for st in 0..nblk + nb - 1 {
        if kv64 && st >= 1 {
            async_wait(0);
            barrier();
        }
        if kv64 {
            tile_mma_wait();
            if st >= 1 {
                // The K panel's 64 rows are B's columns: one `tile_mma_panel` per 16
                // dimensions (a `wgmma` of the workgroup on Hopper).
                // Block st − 1's K panel: its buffer, as the copies placed it.
                let kw = ((st - 1) % nb) * 2 * kb * 68;
                tile_fill(s0, 0.0);
                tile_fill(s1, 0.0);
                tile_fill(s2, 0.0);
                tile_fill(s3, 0.0);
                for kk in 0..8u32 {
                    tile_mma_panel(s0, s1, s2, s3, qa[kk], kv, kw, 64, 0, 16 * kk, false);
                }
            }
        }
        if st < nblk {
            let buf = (st % nb) * 2 * kb * 68;
            // Unrolled, so that the rows' copies start together: 16 copies of 16 bytes
            // per row, each invocation the same quad of rows t0 / 16 + 16j of K and V.
            // Past L1: every workgroup reads its blocks from L2 (its head's other
            // query blocks run on other SMs), and copies that allocate in L1 took 3 %
            // more of the step on the H200 (docs/PERFORMANCE.md).
            // The rows' cells are read first, as in `attn_decode_chunk_mma` (a shared
            // read between synchronous copies serializes them on NVIDIA's Vulkan).
            let mut srcs = [0u32; 4];
            for j in 0..4u32 {
                srcs[j] = cells[(st % 2) * kb + min(t0 / 16 + 16 * j, kb - 1)] * 64 + (t0 % 16) * 4;
            }
            for j in 0..4u32 {
                let r = t0 / 16 + 16 * j;
                if r < kb {
                    let quad = t0 % 16;
                    // With `kv64` K and V are panels of 64 rows at `buf` and `buf + kb · 68`.
                    let kd = select(kv64, buf + panel_word(r, quad, 64), buf + r * 68 + quad * 4);
                    let vd = select(kv64, buf + kb * 68 + panel_word(r, quad, 64), buf + (kb + r) * 68 + quad * 4);
                    async_copy_bypass_l1(kv, kd, k, srcs[j], 4);
                    async_copy_bypass_l1(kv, vd, v, srcs[j], 4);
                }
            }
            // Read by the next step's copies, after its barrier (or this step's last).
            if st + 1 < nblk && t0 < kb {
                let tok = min((st + 1) * kb + t0, len - 1);
                cells[((st + 1) % 2) * kb + t0] = cell_at(pg, tok, kvh);
                if st + 2 < nblk {
                    let pn = page_of(min((st + 2) * kb + t0, len - 1), b);
                    pg = pn;
                }
            }
        }
        async_commit();
        if !kv64 {
            async_wait(0);
            barrier();
        }
        if st + 1 >= nb {
            let u = st + 1 - nb;
            // The block's first K and V value (f16 units).
            let kbase = (u % nb) * 2 * kb * 136;
            let vbase = kbase + kb * 136;
            // S (16 queries × kb tokens) = Q · Kᵀ, Kᵀ read from K's rows.
            if kv64 {
                // S, started before this step's copies.
                tile_mma_wait();
            } else {
                tile_fill(s0, 0.0);
                tile_fill(s1, 0.0);
                // Per 16 dimensions, the Q tile's A operand against the block's two
                // 16-token halves of K.
                for kk in 0..8u32 {
                    tile_load(tb, kv, kbase + 16 * kk, 136, true);
                    tile_mma(s0, qa[kk], tb);
                    tile_load(tb, kv, kbase + 16 * 136 + 16 * kk, 136, true);
                    tile_mma(s1, qa[kk], tb);
                }
            }
            // The scores in registers (through the scratch where a backend must), not
            // yet scaled: tokens past each query's position dropped, the mask added
            // (over the scale, which is positive).
            tile_get(f0, s0, sc, sb, scs);
            tile_get(f1, s1, sc, sb + 16, scs);
            if kv64 {
                tile_get(f2, s2, sc, sb + 32, scs);
                tile_get(f3, s3, sc, sb + 48, scs);
            }
            // Only blocks that reach past the workgroup's first query need the causal test.
            if u * kb + kb - 1 > pos0 + first {
                for e in 0..8u32 {
                    let te = u * kb + cols[e];
                    f0[e] = select(te > pos[(e / 2) % 2], f32::NEG_INFINITY, f0[e]);
                    f1[e] = select(te + 16 > pos[(e / 2) % 2], f32::NEG_INFINITY, f1[e]);
                    if kv64 {
                        f2[e] = select(te + 32 > pos[(e / 2) % 2], f32::NEG_INFINITY, f2[e]);
                        f3[e] = select(te + 48 > pos[(e / 2) % 2], f32::NEG_INFINITY, f3[e]);
                    }
                }
            }
            if has_mask != 0 {
                let mrow = b * pages_per_seq * page_size;
                for e in 0..8u32 {
                    let te = u * kb + cols[e];
                    f0[e] = f0[e] + mask[mrow + min(te, len - 1)] * inv_scale;
                    f1[e] = f1[e] + mask[mrow + min(te + 16, len - 1)] * inv_scale;
                    if kv64 {
                        f2[e] = f2[e] + mask[mrow + min(te + 32, len - 1)] * inv_scale;
                        f3[e] = f3[e] + mask[mrow + min(te + 48, len - 1)] * inv_scale;
                    }
                }
            }
            for e in 0..8u32 {
                mx[e] = max(f0[e], f1[e]);
                if kv64 {
                    mx[e] = max(mx[e], max(f2[e], f3[e]));
                }
            }
            tile_row_max(mx);
            // In log2 units from here: how far the group's rows passed their running
            // maxima (every row, at the first block: the running maxima are −∞).
            for e in 0..8u32 {
                mx[e] = mx[e] * scale2;
                ov[e] = mx[e] - m_row[(e / 2) % 2];
            }
            tile_all_max(ov);
            if u == 0 || ov[0] > 8.0 {
                for i in 0..2u32 {
                    let m_new = max(m_row[i], mx[2 * i]);
                    // The row's factor for O.
                    fac[i] = select(m_row[i] == f32::NEG_INFINITY, 0.0, fast_exp2(m_row[i] - m_new));
                    l_part[i] = l_part[i] * fac[i];
                    m_row[i] = m_new;
                    // A row with no token yet subtracts 0, so that its −∞ scores give 0.
                    m_use[i] = select(m_new == f32::NEG_INFINITY, 0.0, m_new);
                }
                if u > 0 {
                    for j in 0..8u32 {
                        tile_get(ov, o[j], sc, sb, scs);
                        for e in 0..8u32 {
                            ov[e] = ov[e] * fac[(e / 2) % 2];
                        }
                        tile_set(o[j], ov, sc, sb, scs);
                    }
                }
            }
            // The numerators 2^(s · scale · log2 e − m), at most 2^8; the row sums add
            // them before they are rounded to f16 as the A operand of P · V (as
            // FlashAttention does).
            for e in 0..8u32 {
                f0[e] = fast_exp2(f0[e] * scale2 - m_use[(e / 2) % 2]);
                f1[e] = fast_exp2(f1[e] * scale2 - m_use[(e / 2) % 2]);
                l_part[(e / 2) % 2] += f0[e] + f1[e];
                if kv64 {
                    f2[e] = fast_exp2(f2[e] * scale2 - m_use[(e / 2) % 2]);
                    f3[e] = fast_exp2(f3[e] * scale2 - m_use[(e / 2) % 2]);
                    l_part[(e / 2) % 2] += f2[e] + f3[e];
                }
            }
            // O (16 queries × 128 dimensions) += P · V over the block's tokens: with
            // `kv64` the V panel's rows are B's rows, 16 tokens and all 128 dimensions per
            // `tile_mma_panel` (one `wgmma` m64n128k16 on Hopper: 1.5 % faster than two
            // of 64 columns; docs/PERFORMANCE.md).
            if kv64 {
                let vw = vbase / 2;
                tile_set(ta, f0, ps, 2 * pb, 2 * pw);
                tile_set(p1, f1, ps, 2 * pb + 16, 2 * pw);
                tile_set(p2, f2, ps, 2 * pb + 32, 2 * pw);
                tile_set(p3, f3, ps, 2 * pb + 48, 2 * pw);
                tile_mma_panel(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], ta, kv, vw, 64, 0, 0, true);
                tile_mma_panel(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], p1, kv, vw, 64, 16, 0, true);
                tile_mma_panel(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], p2, kv, vw, 64, 32, 0, true);
                tile_mma_panel(o[0], o[1], o[2], o[3], o[4], o[5], o[6], o[7], p3, kv, vw, 64, 48, 0, true);
            }
            for kk in 0..2u32 {
                if !kv64 {
                    if kk == 0 {
                        tile_set(ta, f0, ps, 2 * pb, 2 * pw);
                    } else {
                        tile_set(ta, f1, ps, 2 * pb + 16, 2 * pw);
                    }
                    let vr = vbase + kk * 16 * 136;
                    for j in 0..8u32 {
                        tile_load(tb, kv, vr + 16 * j, 136, false);
                        tile_mma(o[j], ta, tb);
                    }
                }
            }
            if !kv64 {
                barrier();
            }
        }
    }
    // The last block's `P · V`.
    tile_mma_wait();
    // Each row's sum (its 16 slots' parts, then the sink, as the decode combine adds
    // it) and the output rows, each O tile's slots through the scratch where a backend
    // must.
    // Slots 0 and 2 carry the rows' parts (the same row's two where an invocation holds
    // one), the others add nothing.
    let mut l_row = [0.0; 8];
    l_row[0] = l_part[0];
    l_row[2] = l_part[1];
    tile_row_sum(l_row);
    let ob = q_start[b] * out_token_stride + h * out_head_stride;
    // Each of the two rows this invocation holds has one output factor (row i's slots
    // include slot 2i, whose sum `tile_row_sum` gave), its weights by the hardware's
    // `fast_exp2` as the numerators': the portable `exp2` (about 160 instructions) once
    // per slot was a share of each workgroup's time.
    let mut fr = [0.0; 2];
    for i in 0..2u32 {
        let m = m_row[i];
        let mut top = m;
        if has_sinks != 0 {
            top = max(m, sinks[h] * 1.442695041);
        }
        let w = fast_exp2(m - top);
        let mut total = l_row[2 * i] * w;
        if has_sinks != 0 {
            total += fast_exp2(sinks[h] * 1.442695041 - top);
        }
        fr[i] = w / total;
    }
    // Slots 2k and 2k + 1 are columns c and c + 1 of one row (c even, in every layout:
    // docs/DSL.md, "Element access"), so each pair leaves in one 8-byte store: half the
    // stores of one value each, every one writing whole 32-byte sectors (with the Q
    // tile's 8-byte loads, 4.6–15 % of the step on the H200; docs/PERFORMANCE.md).
    for j in 0..8u32 {
        tile_get(ov, o[j], sc, sb, scs);
        for k in 0..4u32 {
            ov[2 * k] = ov[2 * k] * fr[k % 2];
            ov[2 * k + 1] = ov[2 * k + 1] * fr[k % 2];
            if first + (warp % 4) * 16 + rows[2 * k] < tq {
                store_words(out, ob + (first + (warp % 4) * 16 + rows[2 * k]) * out_token_stride + 16 * j + cols[2 * k], ov, 2 * k, 2);
            }
        }
    }
}
