//! Prefill attention on tensor cores with FlashAttention-3's schedule:
//! `attn_prefill_pingpong`, the fast mode of causal prefill on GPUs whose panel products
//! run asynchronously (Hopper's `wgmma`), f16 caches with D = 128.
//!
//! `attn_prefill_mma` gives each workgroup 64 queries and has its four groups copy the
//! next K/V block, compute scores, run the softmax and multiply by V in turn: on the H200
//! the tensor cores idled through the softmax and the copies' address work
//! (docs/PERFORMANCE.md, "Prefill attention"). Here a workgroup takes 128 queries in two
//! warpgroups of 64 and a ninth group of 32 invocations that only copies. The block loop
//! runs in phases closed by a barrier; in each, one warpgroup multiplies (`P · V` of its
//! last block and `S = Q · Kᵀ` of the next, as `tile_mma_panel`s) while the other runs the
//! softmax of the scores it multiplied in the phase before, and the copy group brings
//! the next K and V blocks into the buffers no warpgroup reads. The two warpgroups swap
//! roles every phase (FlashAttention-3's "ping-pong"), so the tensor cores are busy
//! while a softmax runs. Class `fast`, for the reasons of `attn_prefill_mma`.

use onekernel_macros::kernel;

/// Causal attention of 128 consecutive new queries of one query head over the sequence's
/// cache, f16 K and V rows of 128 dimensions (docs/RUNTIME.md, "Prefill"). The arguments,
/// the grid's y and z, the positions, rows and the result's tolerance are
/// `attn_prefill_mma`'s; grid x is the block of 128 queries (heaviest first).
///
/// Invocations 0–127 (warpgroup 0) take queries 0–63 of the block, 128–255 (warpgroup 1)
/// queries 64–127, each group of 32 its 16 rows as `attn_prefill_mma`'s; 256–287 copy.
/// Blocks of 64 tokens: K in two panel buffers, V in two. Phase p: warpgroup w is at step
/// s = p − w; an even step 2u multiplies `O += P_{u−1} · V_{u−1}` and `S = Q · K_uᵀ`
/// (and waits for both), an odd step 2u + 1 turns S into the numerators `P_u` (the
/// online softmax of `attn_prefill_mma`: running maxima that move by more than 8 in
/// log2 units, O rescaled then). The copy group issues K_{w+1} and V_w in phase 2w and
/// waits for them in phase 2w + 1, in which it also finds the cache cells of block w +
/// 2; K_0 is copied before the loop. Each buffer is refilled only after both warpgroups
/// have read it (two phases). The scale must be positive.
#[kernel(workgroup = 256, fast, resident = 1, variants(paged = [false, true]))]
pub fn attn_prefill_pingpong(
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
    #[push] page_size: u32,
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
) {
    // The Q tile: 128 rows of 136 f16 values (as `attn_prefill_mma`'s 64).
    let qs = shared::<u32, 8704u32>();
    // Four panels of 64 rows (`PANEL_ROW_WORDS` = 68 words per row where a backend pads
    // them): K buffers 0 and 1, then V buffers 0 and 1.
    let kv = shared::<u32, 30464u32>();
    // Where a backend reaches tiles' values only through memory: each of the eight
    // computing groups' score and O slots (16 rows of 68 f32) and numerators (16 rows
    // of 36 words), as in `attn_prefill_mma`.
    let sc = shared::<f32, 8704u32>();
    let ps = shared::<u32, 4608u32>();
    // The cache cells of four blocks' tokens: block i's in slot i mod 4.
    let cells = shared::<u32, 256u32>();
    let s0 = tile_acc();
    let s1 = tile_acc();
    let s2 = tile_acc();
    let s3 = tile_acc();
    let o0 = tile_acc();
    let o1 = tile_acc();
    let o2 = tile_acc();
    let o3 = tile_acc();
    let o4 = tile_acc();
    let o5 = tile_acc();
    let o6 = tile_acc();
    let o7 = tile_acc();
    let q0 = tile_a();
    let q1 = tile_a();
    let q2 = tile_a();
    let q3 = tile_a();
    let q4 = tile_a();
    let q5 = tile_a();
    let q6 = tile_a();
    let q7 = tile_a();
    let p0 = tile_a();
    let p1 = tile_a();
    let p2 = tile_a();
    let p3 = tile_a();
    // Token `tok`'s cache cell `(page · page_size + slot) · n_kv_heads + kvh`.
    let cell_of = |tok: u32, b: u32, kvh: u32| -> u32 {
        let logical = b * pages_per_seq + tok / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        (page * page_size + tok % page_size) * n_kv_heads + kvh
    };
    let b = group_id().z;
    let h = group_id().y;
    let qb = num_groups().x - 1 - group_id().x;
    let t0 = local_id().x;
    let wg = warpgroup_id();
    let tw = t0 % 128;
    let warp = t0 / 32;
    let tq = q_tokens[b];
    let len = kv_len[b];
    let first = qb * 128;
    if first >= tq {
        return;
    }
    let kvh = h / (n_heads / n_kv_heads);
    // Position of query 0; blocks 0 … nblk − 1 hold tokens up to the last query's.
    let pos0 = len - tq;
    let nblk = (pos0 + min(first + 127, tq - 1)) / 64 + 1;
    // The warpgroup's first query and its blocks (none past its last query).
    let fw = first + wg * 64;
    let mut nblk_w = 0u32;
    if fw < tq {
        nblk_w = (pos0 + min(fw + 63, tq - 1)) / 64 + 1;
    }
    // Where V's four panel buffers start (words; K's three start at 0, 4352 and 8704).
    let vpanels = 13056u32;
    // Each invocation's quad (16-byte chunk) and first row of a block's copies.
    let quad = tw % 16;
    let crow = tw / 16;
    // The cells of blocks 0 … 3 (one token per invocation) and the Q values, all loads
    // in flight before any is rounded (as in `attn_prefill_mma`); then warpgroup 0
    // copies K_0 and K_1, warpgroup 1 V_0 and V_1, each block a group of copies, and
    // waits for the first.
    let c = cell_of(min(t0, len - 1), b, kvh);
    cells[t0] = c;
    let qw = tw % 64;
    let mut qv = [0.0; 64];
    for j in 0..32u32 {
        let t = min(fw + 2 * j + tw / 64, tq - 1);
        let at = (q_start[b] + t) * q_token_stride + h * q_head_stride + 2 * qw;
        qv[2 * j] = q[at];
        qv[2 * j + 1] = q[at + 1];
    }
    barrier();
    for i in 0..2u32 {
        for j in 0..8u32 {
            let r = crow + 8 * j;
            let src = cells[i * 64 + r] * 64 + quad * 4;
            if wg == 0 {
                async_copy(kv, i * 4352 + panel_word(r, quad, 64), k, src, 4);
            } else {
                async_copy(kv, vpanels + i * 4352 + panel_word(r, quad, 64), v, src, 4);
            }
        }
        async_commit();
    }
    for j in 0..32u32 {
        qs[(wg * 64 + 2 * j + tw / 64) * 68 + qw] = f32_to_f16_bits(qv[2 * j]) | (f32_to_f16_bits(qv[2 * j + 1]) << 16);
    }
    async_wait(1);
    barrier();
    // Each slot's query row within its group's 16 and column within a 16-token tile;
    // per row an invocation holds (two, slot 2i's), its position.
    let mut rows = [0u32; 8];
    let mut cols = [0u32; 8];
    let mut pos = [0u32; 2];
    let sb = warp * 16 * 68;
    let pb = warp * 16 * 36;
    {
        let qr = warp * 16 * 136;
        tile_load(q0, qs, qr, 136, false);
        tile_load(q1, qs, qr + 16, 136, false);
        tile_load(q2, qs, qr + 32, 136, false);
        tile_load(q3, qs, qr + 48, 136, false);
        tile_load(q4, qs, qr + 64, 136, false);
        tile_load(q5, qs, qr + 80, 136, false);
        tile_load(q6, qs, qr + 96, 136, false);
        tile_load(q7, qs, qr + 112, 136, false);
        tile_coords(rows, cols);
        for i in 0..2u32 {
            pos[i] = pos0 + min(fw + (warp % 4) * 16 + rows[2 * i], tq - 1);
        }
        tile_fill(o0, 0.0);
        tile_fill(o1, 0.0);
        tile_fill(o2, 0.0);
        tile_fill(o3, 0.0);
        tile_fill(o4, 0.0);
        tile_fill(o5, 0.0);
        tile_fill(o6, 0.0);
        tile_fill(o7, 0.0);
        tile_fill(s0, 0.0);
        tile_fill(s1, 0.0);
        tile_fill(s2, 0.0);
        tile_fill(s3, 0.0);
    }
    // Per row, its running maximum (log2 units), the value the numerators subtract and
    // this invocation's part of the row's sum.
    let mut m_row = [f32::NEG_INFINITY; 2];
    let mut m_use = [0.0; 2];
    let mut l_part = [0.0; 2];
    let mut fac = [0.0; 2];
    let scale2 = scale * 1.442695041;
    let inv_scale = 1.0 / scale;
    let mut f0 = [0.0; 8];
    let mut f1 = [0.0; 8];
    let mut f2 = [0.0; 8];
    let mut f3 = [0.0; 8];
    let mut mx = [0.0; 8];
    let mut ov = [0.0; 8];
    for p in 0..2 * nblk + 2 {
        if p >= wg {
            let s = p - wg;
            let u = s / 2;
            if s % 2 == 1 {
                // Nothing is pending here (the step before waited), but without a wait on
                // this path ptxas took O's rescale below to be inside a product's pipeline
                // stage and serialized every `wgmma` of the kernel (warning C7515).
                tile_mma_wait();
                if u < nblk_w {
                    // The scores, not yet scaled: tokens past each query's position dropped
                    // (in blocks that reach past the warpgroup's first query), the mask added.
                    tile_get(f0, s0, sc, sb, 68);
                    tile_get(f1, s1, sc, sb + 16, 68);
                    tile_get(f2, s2, sc, sb + 32, 68);
                    tile_get(f3, s3, sc, sb + 48, 68);
                    if u * 64 + 63 > pos0 + fw {
                        for e in 0..8u32 {
                            let te = u * 64 + cols[e];
                            f0[e] = select(te > pos[(e / 2) % 2], f32::NEG_INFINITY, f0[e]);
                            f1[e] = select(te + 16 > pos[(e / 2) % 2], f32::NEG_INFINITY, f1[e]);
                            f2[e] = select(te + 32 > pos[(e / 2) % 2], f32::NEG_INFINITY, f2[e]);
                            f3[e] = select(te + 48 > pos[(e / 2) % 2], f32::NEG_INFINITY, f3[e]);
                        }
                    }
                    if has_mask != 0 {
                        let mrow = b * pages_per_seq * page_size;
                        for e in 0..8u32 {
                            let te = u * 64 + cols[e];
                            f0[e] = f0[e] + mask[mrow + min(te, len - 1)] * inv_scale;
                            f1[e] = f1[e] + mask[mrow + min(te + 16, len - 1)] * inv_scale;
                            f2[e] = f2[e] + mask[mrow + min(te + 32, len - 1)] * inv_scale;
                            f3[e] = f3[e] + mask[mrow + min(te + 48, len - 1)] * inv_scale;
                        }
                    }
                    for e in 0..8u32 {
                        mx[e] = max(max(f0[e], f1[e]), max(f2[e], f3[e]));
                    }
                    tile_row_max(mx);
                    for e in 0..8u32 {
                        mx[e] = mx[e] * scale2;
                        ov[e] = mx[e] - m_row[(e / 2) % 2];
                    }
                    tile_all_max(ov);
                    if u == 0 || ov[0] > 8.0 {
                        for i in 0..2u32 {
                            let m_new = max(m_row[i], mx[2 * i]);
                            fac[i] = select(m_row[i] == f32::NEG_INFINITY, 0.0, fast_exp2(m_row[i] - m_new));
                            l_part[i] = l_part[i] * fac[i];
                            m_row[i] = m_new;
                            m_use[i] = select(m_new == f32::NEG_INFINITY, 0.0, m_new);
                        }
                        if u > 0 {
                            tile_get(ov, o0, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o0, ov, sc, sb, 68);
                            tile_get(ov, o1, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o1, ov, sc, sb, 68);
                            tile_get(ov, o2, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o2, ov, sc, sb, 68);
                            tile_get(ov, o3, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o3, ov, sc, sb, 68);
                            tile_get(ov, o4, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o4, ov, sc, sb, 68);
                            tile_get(ov, o5, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o5, ov, sc, sb, 68);
                            tile_get(ov, o6, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o6, ov, sc, sb, 68);
                            tile_get(ov, o7, sc, sb, 68);
                            for e in 0..8u32 {
                                ov[e] = ov[e] * fac[(e / 2) % 2];
                            }
                            tile_set(o7, ov, sc, sb, 68);
                        }
                    }
                    // The numerators 2^(s · scale · log2 e − m), at most 2^8, summed before
                    // they are rounded to f16 as the A operands of the next phase's P · V.
                    for e in 0..8u32 {
                        f0[e] = fast_exp2(f0[e] * scale2 - m_use[(e / 2) % 2]);
                        f1[e] = fast_exp2(f1[e] * scale2 - m_use[(e / 2) % 2]);
                        f2[e] = fast_exp2(f2[e] * scale2 - m_use[(e / 2) % 2]);
                        f3[e] = fast_exp2(f3[e] * scale2 - m_use[(e / 2) % 2]);
                        l_part[(e / 2) % 2] += (f0[e] + f1[e]) + (f2[e] + f3[e]);
                    }
                    tile_set(p0, f0, ps, 2 * pb, 72);
                    tile_set(p1, f1, ps, 2 * pb + 16, 72);
                    tile_set(p2, f2, ps, 2 * pb + 32, 72);
                    tile_set(p3, f3, ps, 2 * pb + 48, 72);
                }
            } else {
                // S = Q · K_uᵀ (one `tile_mma_panel` per 16 dimensions), then O +=
                // P_{u−1} · V_{u−1} (one of 128 columns per 16 tokens). S first: its zeros
                // written after `P · V` was issued made ptxas serialize every product
                // (its warning C7515).
                if u < nblk_w {
                    let kw = (u % 3) * 4352;
                    tile_fill(s0, 0.0);
                    tile_fill(s1, 0.0);
                    tile_fill(s2, 0.0);
                    tile_fill(s3, 0.0);
                    tile_mma_panel(s0, s1, s2, s3, q0, kv, kw, 64, 0, 0, false);
                    tile_mma_panel(s0, s1, s2, s3, q1, kv, kw, 64, 0, 16, false);
                    tile_mma_panel(s0, s1, s2, s3, q2, kv, kw, 64, 0, 32, false);
                    tile_mma_panel(s0, s1, s2, s3, q3, kv, kw, 64, 0, 48, false);
                    tile_mma_panel(s0, s1, s2, s3, q4, kv, kw, 64, 0, 64, false);
                    tile_mma_panel(s0, s1, s2, s3, q5, kv, kw, 64, 0, 80, false);
                    tile_mma_panel(s0, s1, s2, s3, q6, kv, kw, 64, 0, 96, false);
                    tile_mma_panel(s0, s1, s2, s3, q7, kv, kw, 64, 0, 112, false);
                }
                if u >= 1 && u <= nblk_w {
                    let vw = vpanels + ((u - 1) % 4) * 4352;
                    tile_mma_panel(o0, o1, o2, o3, o4, o5, o6, o7, p0, kv, vw, 64, 0, 0, true);
                    tile_mma_panel(o0, o1, o2, o3, o4, o5, o6, o7, p1, kv, vw, 64, 16, 0, true);
                    tile_mma_panel(o0, o1, o2, o3, o4, o5, o6, o7, p2, kv, vw, 64, 32, 0, true);
                    tile_mma_panel(o0, o1, o2, o3, o4, o5, o6, o7, p3, kv, vw, 64, 48, 0, true);
                }
                // While the products run: warpgroup 0 copies K_{u+2} into the K buffer
                // read last in phases 2u − 2 and 2u − 1; warpgroup 1 (in phase 2u + 1)
                // V_{u+2} into the V buffer read last in phases 2u − 4 and 2u − 3. Each
                // is waited for at the end of the warpgroup's phase after next, three
                // phases on: with one, a warpgroup waited for its copies at every step.
                if u + 2 < nblk {
                    let cs = ((u + 2) % 4) * 64;
                    for j in 0..8u32 {
                        let r = crow + 8 * j;
                        let src = cells[cs + r] * 64 + quad * 4;
                        if wg == 0 {
                            async_copy(kv, ((u + 2) % 3) * 4352 + panel_word(r, quad, 64), k, src, 4);
                        } else {
                            async_copy(kv, vpanels + ((u + 2) % 4) * 4352 + panel_word(r, quad, 64), v, src, 4);
                        }
                    }
                }
                async_commit();
                tile_mma_wait();
            }
            if s % 2 == 1 {
                // Warpgroup 0 finds block u + 4's cells, into the slot block u's were
                // in (read last by V_u's copies, in phase 2u − 3). Every group of copies
                // but the last (issued in the phase before) is then complete.
                if wg == 0 && u + 4 < nblk && tw < 64 {
                    let c = cell_of(min((u + 4) * 64 + tw, len - 1), b, kvh);
                    cells[(u % 4) * 64 + tw] = c;
                }
                async_wait(1);
            }
        }
        barrier();
    }
    {
        // Each row's sum (its 16 slots' parts, then the sink) and the output rows.
        let mut l_row = [0.0; 8];
        l_row[0] = l_part[0];
        l_row[2] = l_part[1];
        tile_row_sum(l_row);
        let ob = q_start[b] * out_token_stride + h * out_head_stride;
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
        let r0 = fw + (warp % 4) * 16;
        tile_get(ov, o0, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o1, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 16 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o2, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 32 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o3, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 48 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o4, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 64 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o5, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 80 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o6, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 96 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
        tile_get(ov, o7, sc, sb, 68);
        for e in 0..8u32 {
            if r0 + rows[e] < tq {
                out[ob + (r0 + rows[e]) * out_token_stride + 112 + cols[e]] = ov[e] * fr[(e / 2) % 2];
            }
        }
    }
}
