//! Decode attention (one query token per sequence) over a paged or contiguous KV cache,
//! in ggml's `FLASH_ATTN_EXT` conventions (`../shared/fixtures/attention/README.md`),
//! split over the KV sequence:
//!
//! * `attn_decode_chunk`: grid `[n_chunks, n_kv_heads, n_seq]`; each workgroup scores
//!   one contiguous chunk of one sequence's tokens for the query heads of one KV head
//!   (GQA: each K/V row is read once per eight query heads) and writes per query head
//!   the chunk's max `m`, sum `l = Σ exp(s − m)` and `acc[d] = Σ exp(s − m) v[d]`.
//! * `attn_decode_combine`: grid `[n_heads, n_seq]`; merges a sequence's chunks in chunk
//!   order (the fixed merge order), adds the head's sink to the denominator, normalizes.
//!
//! With `deterministic`, a chunk is always 256 tokens starting at token 0, so a
//! sequence's result does not depend on the batch it is in, the grid, or the page layout;
//! otherwise the caller chooses `chunk_tokens` (≤ 256) from the work and the device.
//! `paged` selects the in-kernel block-table read (`block_table[b][t / page_size]`);
//! without it sequence b owns pages `b·pages_per_seq …` in order.

use onekernel_macros::kernel;

/// Scores, softmax numerator and weighted V of one chunk (see the module docs).
///
/// K and V are memory images of the cache as little-endian 32-bit words; `k_type` /
/// `v_type` give their formats independently: 0 `f32`, 1 `f16`, 2 `bf16`, 3 `q8_0`
/// (per 32 elements: f16 scale `d` + 32 × i8, value `d·q`), 4 `q4_0` (f16 `d` + 16 bytes;
/// element j < 16 is the low nibble of byte j, j ≥ 16 the high nibble of byte j − 16;
/// value `d·(nibble − 8)`). Every format widens exactly to f32, so results are those
/// over the stored values. The formats are push constants: a uniform branch per element
/// costs little next to the loads, and 25 format pairs as specializations would multiply
/// every backend's variants.
#[kernel(workgroup = 128, variants(paged = [false, true], deterministic = [false, true]))]
pub fn attn_decode_chunk(
    #[len(num_groups().z * n_heads * head_dim)] q: &[f32],
    #[len((n_kv_heads * select(k_type == 0, head_dim * 4, select(k_type <= 2, head_dim * 2, head_dim / 32 * select(k_type == 3, 34, 18))) + 3) / 4)] k: &[u32],
    #[len((n_kv_heads * select(v_type == 0, head_dim * 4, select(v_type <= 2, head_dim * 2, head_dim / 32 * select(v_type == 3, 34, 18))) + 3) / 4)] v: &[u32],
    #[len(select(paged, num_groups().z * pages_per_seq, 1))] block_table: &[i32],
    #[len(num_groups().z)] kv_len: &[u32],
    #[len(select(has_mask != 0, num_groups().z * pages_per_seq * page_size, 1))] mask: &[f16],
    #[len(num_groups().z * n_heads * n_chunks)] part_m: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks)] part_l: &mut [f32],
    #[len(num_groups().z * n_heads * n_chunks * head_dim)] part_acc: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_kv_heads: u32,
    #[push] page_size: u32,
    #[push] pages_per_seq: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] scale: f32,
    #[push] softcap: f32,
    #[push] max_bias: f32,
    #[push] has_mask: u32,
    #[push] k_type: u32,
    #[push] v_type: u32,
    #[spec(default = 128)] head_dim: u32,
) {
    let queries = shared::<f32, 2048>();
    let scores = shared::<f32, 2048>();
    // Bytes of one `[head_dim]` row in format `fmt`.
    let row_bytes = |fmt: u32| -> u32 { select(fmt == 0, head_dim * 4, select(fmt <= 2, head_dim * 2, head_dim / 32 * select(fmt == 3, 34u32, 18u32))) };
    // Byte offset of the row of (sequence b, token t, KV head kvh): the block table is
    // read in place when `paged`; otherwise sequence b owns pages b·pages_per_seq … .
    let row_at = |b: u32, t: u32, kvh: u32, bytes: u32| -> u32 {
        let logical = b * pages_per_seq + t / page_size;
        let mut page = logical;
        if paged {
            page = block_table[logical] as u32;
        }
        ((page * page_size + t % page_size) * n_kv_heads + kvh) * bytes
    };
    // Element d of the row at byte `row` of image `w` in format `fmt`.
    let elem = |w: &[u32], row: u32, d: u32, fmt: u32| -> f32 {
        let mut x = 0.0;
        if fmt == 0 {
            x = f32::from_bits(w[row / 4 + d]);
        } else if fmt <= 2 {
            let o = row + 2 * d;
            let bits = (w[o / 4] >> ((o % 4) * 8)) & 65535;
            x = select(fmt == 1, f16_bits_to_f32(bits), f32::from_bits(bits << 16));
        } else {
            // Blocks start at even bytes, so the f16 scale never straddles a word.
            let o = row + (d / 32) * select(fmt == 3, 34u32, 18u32);
            let sc = f16_bits_to_f32((w[o / 4] >> ((o % 4) * 8)) & 65535);
            let j = d % 32;
            let mut qv = 0i32;
            if fmt == 3 {
                let at = o + 2 + j;
                let raw = (w[at / 4] >> ((at % 4) * 8)) & 255;
                qv = (raw as i32) - select(raw >= 128, 256, 0);
            } else {
                let at = o + 2 + j % 16;
                let byte = (w[at / 4] >> ((at % 4) * 8)) & 255;
                qv = (select(j < 16, byte & 15, byte >> 4) as i32) - 8;
            }
            x = sc * (qv as f32);
        }
        x
    };
    let c = group_id().x;
    let kvh = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    let chunk = select(deterministic, 256u32, min(chunk_tokens, 256u32));
    let len = kv_len[b];
    let start = c * chunk;
    let end = min(start + chunk, len);
    let n = select(end > start, end - start, 0u32);
    let group = n_heads / n_kv_heads;
    let k_bytes = row_bytes(k_type);
    let v_bytes = row_bytes(v_type);
    // ALiBi (ggml): n2 = largest power of two ≤ n_heads.
    let mut n2 = 1u32;
    while n2 * 2 <= n_heads {
        n2 = n2 * 2;
    }
    let nf = n2 as f32;
    // The query heads sharing this KV head, eight at a time: each K and V row is read
    // once per eight heads, and every head's arithmetic is what it would be alone.
    for h0 in (0..group).step_by(8u32) {
        let hn = min(8u32, group - h0);
        let head0 = kvh * group + h0;
        for i in (t0..hn * head_dim).step_by(WORKGROUP_X) {
            queries[i] = q[(b * n_heads + head0 + i / head_dim) * head_dim + i % head_dim];
        }
        barrier();
        for i in (t0..chunk).step_by(WORKGROUP_X) {
            let t = start + i;
            let mut dots = [0.0; 8];
            if t < end {
                let krow = row_at(b, t, kvh, k_bytes);
                if k_type == 1 {
                    // f16: two elements per 32-bit load.
                    for w in 0..head_dim / 2 {
                        let word = k[krow / 4 + w];
                        let lo = f16_bits_to_f32(word & 65535);
                        let hi = f16_bits_to_f32(word >> 16);
                        for hh in 0..8u32 {
                            if hh < hn {
                                let qb = hh * head_dim + 2 * w;
                                dots[hh] = fma(queries[qb + 1], hi, fma(queries[qb], lo, dots[hh]));
                            }
                        }
                    }
                } else {
                    for d in 0..head_dim {
                        let kd = elem(k, krow, d, k_type);
                        for hh in 0..8u32 {
                            if hh < hn {
                                dots[hh] = fma(queries[hh * head_dim + d], kd, dots[hh]);
                            }
                        }
                    }
                }
            }
            for hh in 0..8u32 {
                if hh < hn {
                    let h = head0 + hh;
                    let mut s = f32::NEG_INFINITY;
                    if t < end {
                        s = dots[hh] * scale;
                        if softcap > 0.0 {
                            s = softcap * tanh(s / softcap);
                        }
                        if has_mask != 0 {
                            let slope_lo = exp2(-(max_bias / nf) * ((h + 1) as f32));
                            let slope_hi = exp2(-(max_bias / 2.0 / nf) * ((2 * (h - min(h, n2)) + 1) as f32));
                            let slope = select(max_bias > 0.0, select(h < n2, slope_lo, slope_hi), 1.0);
                            s = fma(slope, mask[b * pages_per_seq * page_size + t], s);
                        }
                    }
                    scores[hh * 256 + i] = s;
                }
            }
        }
        for hh in 0..8u32 {
            if hh < hn {
                let mut m_local = f32::NEG_INFINITY;
                for i in (t0..chunk).step_by(WORKGROUP_X) {
                    m_local = max(m_local, scores[hh * 256 + i]);
                }
                let m = workgroup_max(m_local);
                let mut l_local = 0.0;
                for i in (t0..chunk).step_by(WORKGROUP_X) {
                    let s = scores[hh * 256 + i];
                    let p = select(s == f32::NEG_INFINITY, 0.0, exp(s - m));
                    scores[hh * 256 + i] = p;
                    l_local += p;
                }
                let l = workgroup_sum(l_local);
                if t0 == 0 {
                    let row = (b * n_heads + head0 + hh) * n_chunks + c;
                    part_m[row] = m;
                    part_l[row] = l;
                }
            }
        }
        barrier();
        for d in (t0..head_dim).step_by(WORKGROUP_X) {
            let mut acc = [0.0; 8];
            for i in 0..n {
                let vrow = row_at(b, start + i, kvh, v_bytes);
                let vd = elem(v, vrow, d, v_type);
                for hh in 0..8u32 {
                    if hh < hn {
                        acc[hh] = fma(scores[hh * 256 + i], vd, acc[hh]);
                    }
                }
            }
            for hh in 0..8u32 {
                if hh < hn {
                    part_acc[((b * n_heads + head0 + hh) * n_chunks + c) * head_dim + d] = acc[hh];
                }
            }
        }
        barrier();
    }
}

/// Merges the chunks of each (sequence, head) in chunk order and normalizes.
#[kernel(workgroup = 128, variants(deterministic = [false, true]))]
pub fn attn_decode_combine(
    #[len(num_groups().y * n_heads * n_chunks)] part_m: &[f32],
    #[len(num_groups().y * n_heads * n_chunks)] part_l: &[f32],
    #[len(num_groups().y * n_heads * n_chunks * head_dim)] part_acc: &[f32],
    #[len(num_groups().y)] kv_len: &[u32],
    #[len(select(has_sinks != 0, n_heads, 1))] sinks: &[f32],
    #[len(num_groups().y * n_heads * head_dim)] out: &mut [f32],
    #[push] n_heads: u32,
    #[push] n_chunks: u32,
    #[push] chunk_tokens: u32,
    #[push] has_sinks: u32,
    #[spec(default = 128)] head_dim: u32,
) {
    let h = group_id().x;
    let b = group_id().y;
    let t0 = local_id().x;
    let chunk = select(deterministic, 256u32, min(chunk_tokens, 256u32));
    let used = min((kv_len[b] + chunk - 1) / chunk, n_chunks);
    let row = (b * n_heads + h) * n_chunks;
    let mut big = f32::NEG_INFINITY;
    for c in 0..used {
        big = max(big, part_m[row + c]);
    }
    let mut sink = f32::NEG_INFINITY;
    if has_sinks != 0 {
        sink = sinks[h];
    }
    big = max(big, sink);
    let mut total = 0.0;
    for c in 0..used {
        let w = select(part_m[row + c] == f32::NEG_INFINITY, 0.0, exp(part_m[row + c] - big));
        total = fma(part_l[row + c], w, total);
    }
    if has_sinks != 0 {
        total += exp(sink - big);
    }
    let inv = recip(total);
    for d in (t0..head_dim).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for c in 0..used {
            let w = select(part_m[row + c] == f32::NEG_INFINITY, 0.0, exp(part_m[row + c] - big));
            acc = fma(part_acc[(row + c) * head_dim + d], w, acc);
        }
        out[(b * n_heads + h) * head_dim + d] = acc * inv;
    }
}
