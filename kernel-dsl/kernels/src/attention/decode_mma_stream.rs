//! Decode attention on tensor cores by persistent workgroups:
//! `attn_decode_chunk_mma_stream`, `attn_decode_chunk_mma`'s chunks streamed.
//!
//! The same chunks, numerics and partial results as `attn_decode_chunk_mma` (whose
//! docs describe one chunk's computation), but a launch has as many workgroups as stay
//! resident, and each takes the chunks (items) `group_id().x`, `+ num_groups().x`, …,
//! skipping those past their sequence's end. A workgroup's K and V tiles of all its
//! items form one stream through the two shared buffers: the next item's first tiles are
//! copied while this item's last are used, and the block table is read one tile ahead,
//! so a chunk's start (its sequence length, block table, queries, first tile) is no gap
//! in the workgroup's loads (docs/PERFORMANCE.md, "Tensor cores").

use onekernel_macros::kernel;

/// Partial results of every chunk (`n_chunks` per sequence and KV head) of `n_seq`
/// sequences, by persistent workgroups; see the module docs. Items past a sequence's
/// chunks are not written (the combine reads a sequence's own chunks only).
#[kernel(workgroup = 128, fast, variants(paged = [false, true]))]
pub fn attn_decode_chunk_mma_stream(
    #[len(n_seq * n_heads * 128)] q: &[f32],
    #[len(n_kv_heads * 64)] k: &[u32],
    #[len(n_kv_heads * 64)] v: &[u32],
    #[len(select(paged, n_seq * pages_per_seq, 1))] block_table: &[i32],
    #[len(n_seq)] kv_len: &[u32],
    #[len(select(has_mask != 0, n_seq * pages_per_seq * page_size, 1))] mask: &[f16],
    #[len(n_seq * n_heads * n_chunks)] part_m: &mut [f32],
    #[len(n_seq * n_heads * n_chunks)] part_l: &mut [f32],
    #[len(n_seq * n_heads * n_chunks * 128)] part_acc: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] page_size: u32,
    #[push] pages_per_seq: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] scale: f32,
    #[push] has_mask: u32,
    #[push] n_seq: u32,
) {
    // As in `attn_decode_chunk_mma`, with the block table's cells for two tiles (a ring)
    // instead of a chunk's: 54 KiB, four workgroups per SM.
    let kv = shared::<u32, 8704u32>();
    let scores = shared::<f32, 2080u32>();
    let pv = shared::<u32, 1056u32>();
    let qh = shared::<u32, 544u32>();
    let o = shared::<f32, 1024u32>();
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
    // The first item from `i` on (stride `stride`) that holds tokens of its sequence,
    // or `total`.
    let next_item = |i: u32, stride: u32, chunk: u32, total: u32| -> u32 {
        let mut j = i;
        while j < total && (j % n_chunks) * chunk >= kv_len[j / (n_chunks * n_kv_heads)] {
            j = j + stride;
        }
        min(j, total)
    };
    // The cache cell ((page·page_size + slot)·n_kv_heads + kvh) of token t of sequence b.
    let cell_of = |t: u32, b: u32, kvh: u32| -> u32 {
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        (page * page_size + t % page_size) * n_kv_heads + kvh
    };
    let t0 = local_id().x;
    let warp = t0 / 32;
    let quad = t0 % 16;
    let group = n_heads / n_kv_heads;
    let wide = group > 4;
    let chunk = min(chunk_tokens, select(wide, 256u32, 512u32));
    let ss = select(wide, 260u32, 520u32);
    let ps = select(wide, 264u32, 520u32);
    let lph = select(wide, 16u32, 32u32);
    let h = t0 / lph;
    let l = t0 % lph;
    let stride = num_groups().x;
    let total = n_chunks * n_kv_heads * n_seq;
    // The issue cursor: item `ii`, step `ik` of its 2·tiles (K tiles, then V tiles).
    let first = next_item(group_id().x, stride, chunk, total);
    let mut ii = first;
    let mut ik = 0u32;
    // The issue cursor's item: sequence, KV head, first token, tokens, tiles (kept, so
    // that a step divides nothing).
    let mut i_b = 0u32;
    let mut i_kvh = 0u32;
    let mut i_start = 0u32;
    let mut i_n = 0u32;
    let mut i_tiles = 0u32;
    if ii < total {
        i_b = ii / (n_chunks * n_kv_heads);
        i_kvh = (ii / n_chunks) % n_kv_heads;
        i_start = (ii % n_chunks) * chunk;
        i_n = min(i_start + chunk, kv_len[i_b]) - i_start;
        i_tiles = (i_n + 63) / 64;
    }
    // The use cursor, one step behind, and its item's chunk, KV head, sequence, first
    // token, tokens and tiles.
    let mut ui = first;
    let mut uk = 0u32;
    let mut u_c = 0u32;
    let mut u_kvh = 0u32;
    let mut u_b = 0u32;
    let mut u_start = 0u32;
    let mut u_n = 0u32;
    let mut u_tiles = 0u32;
    if ui < total {
        u_c = ui % n_chunks;
        u_kvh = (ui / n_chunks) % n_kv_heads;
        u_b = ui / (n_chunks * n_kv_heads);
        u_start = u_c * chunk;
        u_n = min(u_start + chunk, kv_len[u_b]) - u_start;
        u_tiles = (u_n + 63) / 64;
    }
    // Cells of the first tile.
    if ii < total && t0 < 64 {
        let cc = cell_of(i_start + min(t0, i_n - 1), i_b, i_kvh);
        cells[t0] = cc;
    }
    barrier();
    // Stream position of the next issue: its buffer and cells slot are s % 2.
    let mut s = 0u32;
    while ui < total {
        if ii < total {
            let tiles = i_tiles;
            let buf = (s % 2) * 4352;
            for r in (t0 / 16..64u32).step_by(8) {
                let src = cells[(s % 2) * 64 + r] * 64 + quad * 4;
                if ik < tiles {
                    async_copy(kv, buf + r * 68 + quad * 4, k, src, 4);
                } else {
                    async_copy(kv, buf + r * 68 + quad * 4, v, src, 4);
                }
            }
            ik = ik + 1;
            if ik == 2 * tiles {
                ii = next_item(ii + stride, stride, chunk, total);
                ik = 0;
                if ii < total {
                    i_b = ii / (n_chunks * n_kv_heads);
                    i_kvh = (ii / n_chunks) % n_kv_heads;
                    i_start = (ii % n_chunks) * chunk;
                    i_n = min(i_start + chunk, kv_len[i_b]) - i_start;
                    i_tiles = (i_n + 63) / 64;
                }
            }
        }
        async_commit();
        // The next issue's cells into the slot the issue before this one read (before the
        // barriers of the last iteration): in the first iteration, which has no use step,
        // with a barrier of its own; later after this iteration's first barrier, so that
        // the block table's latency passes while the tile is used.
        let next_cells = ii < total && t0 < 64;
        if s == 0 {
            if next_cells {
                let tile = select(ik < i_tiles, ik, ik - i_tiles);
                let cc = cell_of(i_start + min(64 * tile + t0, i_n - 1), i_b, i_kvh);
                cells[64 + t0] = cc;
            }
            barrier();
        }
        if s >= 1 {
            async_wait(1);
            barrier();
            if next_cells {
                let tile = select(ik < i_tiles, ik, ik - i_tiles);
                let cc = cell_of(i_start + min(64 * tile + t0, i_n - 1), i_b, i_kvh);
                cells[((s + 1) % 2) * 64 + t0] = cc;
            }
            // Use step uk of item ui (buffer (s − 1) % 2).
            let c = u_c;
            let b = u_b;
            let head0 = u_kvh * group;
            let start = u_start;
            let n = u_n;
            let tiles = u_tiles;
            let buf_h = ((s - 1) % 2) * 8704;
            if uk == 0 {
                // The item's queries and cleared scores.
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
                for i in (t0..2080u32).step_by(WORKGROUP_X) {
                    scores[i] = 0.0;
                }
                barrier();
            }
            if uk < tiles {
                mma_f16(scores, uk * 64 + 16 * warp, 1, ss, group, kv, buf_h + 16 * warp * 136, 136, false, qh, 0, 136, 128);
            } else {
                if uk == tiles {
                    // The softmax, as in `attn_decode_chunk_mma`.
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
                    let mut ls = 0.0;
                    if h < group {
                        for i in (l..tiles * 32).step_by(lph) {
                            let mut w = 0u32;
                            for e in 0..2u32 {
                                if 2 * i + e < n {
                                    let x = scores[h * ss + 2 * i + e];
                                    let p = to_f16(select(x == f32::NEG_INFINITY, 0.0, exp(x - m)));
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
                let vt = uk - tiles;
                for mt in 0..2u32 {
                    mma_f16(o, 32 * warp + 16 * mt, 1, 128, group, kv, buf_h + 32 * warp + 16 * mt, 136, true, pv, vt * 64, ps, 64);
                }
                if uk + 1 == 2 * tiles {
                    barrier();
                    for i in (t0..group * 128).step_by(WORKGROUP_X) {
                        part_acc[((b * n_heads + head0 + i / 128) * n_chunks + c) * 128 + i % 128] = o[i];
                    }
                }
            }
            uk = uk + 1;
            if uk == 2 * tiles {
                ui = next_item(ui + stride, stride, chunk, total);
                uk = 0;
                if ui < total {
                    u_c = ui % n_chunks;
                    u_kvh = (ui / n_chunks) % n_kv_heads;
                    u_b = ui / (n_chunks * n_kv_heads);
                    u_start = u_c * chunk;
                    u_n = min(u_start + chunk, kv_len[u_b]) - u_start;
                    u_tiles = (u_n + 63) / 64;
                }
            }
            barrier();
        }
        s = s + 1;
    }
}
