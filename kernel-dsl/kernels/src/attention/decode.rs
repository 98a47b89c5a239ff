//! Decode attention (one query token per sequence) over a paged or contiguous KV cache,
//! in ggml's `FLASH_ATTN_EXT` conventions (`../shared/fixtures/attention/README.md`),
//! split over the KV sequence:
//!
//! * `attn_decode_chunk_<K>_<V>`: grid `[n_chunks, n_heads, n_seq]`; each workgroup
//!   scores one contiguous chunk of one sequence's tokens for one query head and writes
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
#[kernel(workgroup = 128, variants(paged = [false, true], deterministic = [false, true], K = [f32, f16, bf16], V = [f32, f16, bf16]))]
pub fn attn_decode_chunk(
    #[len(num_groups().z * n_heads * head_dim)] q: &[f32],
    #[len(n_kv_heads * head_dim)] k: &[K],
    #[len(n_kv_heads * head_dim)] v: &[V],
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
    #[spec(default = 128)] head_dim: u32,
) {
    let scores = shared::<f32, 256>();
    let c = group_id().x;
    let h = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    let chunk = select(deterministic, 256u32, min(chunk_tokens, 256u32));
    let len = kv_len[b];
    let start = c * chunk;
    let end = min(start + chunk, len);
    let kvh = h / (n_heads / n_kv_heads);
    let qbase = (b * n_heads + h) * head_dim;
    // ALiBi slope (ggml): n = largest power of two ≤ n_heads.
    let mut n2 = 1u32;
    while n2 * 2 <= n_heads {
        n2 = n2 * 2;
    }
    let nf = n2 as f32;
    let slope_lo = exp2(-(max_bias / nf) * ((h + 1) as f32));
    let slope_hi = exp2(-(max_bias / 2.0 / nf) * ((2 * (h - min(h, n2)) + 1) as f32));
    let slope = select(max_bias > 0.0, select(h < n2, slope_lo, slope_hi), 1.0);

    let mut m_local = f32::NEG_INFINITY;
    for i in (t0..chunk).step_by(WORKGROUP_X) {
        let t = start + i;
        let mut s = f32::NEG_INFINITY;
        if t < end {
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            let kbase = ((page * page_size + t % page_size) * n_kv_heads + kvh) * head_dim;
            let mut dot = 0.0;
            for d in 0..head_dim {
                dot = fma(q[qbase + d], k[kbase + d], dot);
            }
            s = dot * scale;
            if softcap > 0.0 {
                s = softcap * tanh(s / softcap);
            }
            if has_mask != 0 {
                s = fma(slope, mask[b * pages_per_seq * page_size + t], s);
            }
        }
        scores[i] = s;
        m_local = max(m_local, s);
    }
    let m = workgroup_max(m_local);
    let mut l_local = 0.0;
    for i in (t0..chunk).step_by(WORKGROUP_X) {
        let s = scores[i];
        let p = select(s == f32::NEG_INFINITY, 0.0, exp(s - m));
        scores[i] = p;
        l_local += p;
    }
    let l = workgroup_sum(l_local);
    let n = select(end > start, end - start, 0u32);
    let row = (b * n_heads + h) * n_chunks + c;
    for d in (t0..head_dim).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for i in 0..n {
            let t = start + i;
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            let vbase = ((page * page_size + t % page_size) * n_kv_heads + kvh) * head_dim;
            acc = fma(scores[i], v[vbase + d], acc);
        }
        part_acc[row * head_dim + d] = acc;
    }
    if t0 == 0 {
        part_m[row] = m;
        part_l[row] = l;
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

/// [`attn_decode_chunk`] for ggml-quantized caches: K and V are byte images whose
/// `[head_dim]` rows are `head_dim / 32` blocks, `kq` / `vq` = 0 for `q8_0` (f16 scale `d`
/// + 32 × i8, value `d·q`) or 1 for `q4_0` (f16 `d` + 16 bytes; element j < 16 is the low
/// nibble of byte j, j ≥ 16 the high nibble of byte j − 16; value `d·(nibble − 8)`).
/// Dequantized values are exact in f32, so the results are those over the stored values.
#[kernel(workgroup = 128, variants(paged = [false, true], deterministic = [false, true], kq = [0, 1], vq = [0, 1]))]
pub fn attn_decode_chunk_q(
    #[len(num_groups().z * n_heads * head_dim)] q: &[f32],
    #[len(n_kv_heads * (head_dim / 32) * select(kq == 0, 34, 18))] k: &[u8],
    #[len(n_kv_heads * (head_dim / 32) * select(vq == 0, 34, 18))] v: &[u8],
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
    #[spec(default = 128)] head_dim: u32,
) {
    let scores = shared::<f32, 256>();
    let c = group_id().x;
    let h = group_id().y;
    let b = group_id().z;
    let t0 = local_id().x;
    let chunk = select(deterministic, 256u32, min(chunk_tokens, 256u32));
    let len = kv_len[b];
    let start = c * chunk;
    let end = min(start + chunk, len);
    let kvh = h / (n_heads / n_kv_heads);
    let qbase = (b * n_heads + h) * head_dim;
    let kbb = select(kq == 0, 34u32, 18u32);
    let vbb = select(vq == 0, 34u32, 18u32);
    let blocks = head_dim / 32;
    let mut n2 = 1u32;
    while n2 * 2 <= n_heads {
        n2 = n2 * 2;
    }
    let nf = n2 as f32;
    let slope_lo = exp2(-(max_bias / nf) * ((h + 1) as f32));
    let slope_hi = exp2(-(max_bias / 2.0 / nf) * ((2 * (h - min(h, n2)) + 1) as f32));
    let slope = select(max_bias > 0.0, select(h < n2, slope_lo, slope_hi), 1.0);

    let mut m_local = f32::NEG_INFINITY;
    for i in (t0..chunk).step_by(WORKGROUP_X) {
        let t = start + i;
        let mut s = f32::NEG_INFINITY;
        if t < end {
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            let krow = ((page * page_size + t % page_size) * n_kv_heads + kvh) * blocks * kbb;
            let mut dot = 0.0;
            for d in 0..head_dim {
                let off = krow + (d / 32) * kbb;
                let sc = f16_bits_to_f32(k[off] | (k[off + 1] << 8));
                let j = d % 32;
                let mut qv = 0i32;
                if kq == 0 {
                    let raw = k[off + 2 + j];
                    qv = (raw as i32) - select(raw >= 128, 256, 0);
                } else {
                    let byte = k[off + 2 + j % 16];
                    qv = (select(j < 16, byte & 15, byte >> 4) as i32) - 8;
                }
                dot = fma(q[qbase + d], sc * (qv as f32), dot);
            }
            s = dot * scale;
            if softcap > 0.0 {
                s = softcap * tanh(s / softcap);
            }
            if has_mask != 0 {
                s = fma(slope, mask[b * pages_per_seq * page_size + t], s);
            }
        }
        scores[i] = s;
        m_local = max(m_local, s);
    }
    let m = workgroup_max(m_local);
    let mut l_local = 0.0;
    for i in (t0..chunk).step_by(WORKGROUP_X) {
        let s = scores[i];
        let p = select(s == f32::NEG_INFINITY, 0.0, exp(s - m));
        scores[i] = p;
        l_local += p;
    }
    let l = workgroup_sum(l_local);
    let n = select(end > start, end - start, 0u32);
    let row = (b * n_heads + h) * n_chunks + c;
    for d in (t0..head_dim).step_by(WORKGROUP_X) {
        let mut acc = 0.0;
        for i in 0..n {
            let t = start + i;
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            let off = ((page * page_size + t % page_size) * n_kv_heads + kvh) * blocks * vbb + (d / 32) * vbb;
            let sc = f16_bits_to_f32(v[off] | (v[off + 1] << 8));
            let j = d % 32;
            let mut qv = 0i32;
            if vq == 0 {
                let raw = v[off + 2 + j];
                qv = (raw as i32) - select(raw >= 128, 256, 0);
            } else {
                let byte = v[off + 2 + j % 16];
                qv = (select(j < 16, byte & 15, byte >> 4) as i32) - 8;
            }
            acc = fma(scores[i], sc * (qv as f32), acc);
        }
        part_acc[row * head_dim + d] = acc;
    }
    if t0 == 0 {
        part_m[row] = m;
        part_l[row] = l;
    }
}
