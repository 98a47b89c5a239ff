//! Decode attention for wide heads and FP8 rows: K rows of up to 1024 elements, V rows of
//! up to 512 (MLA: K carries 512 latent + 64 rotary dimensions, V the 512 latent), many
//! query heads over one KV head, and the FP8 row formats of
//! `tests/fixtures/attention-fp8/README.md` beside the five formats of
//! `attn_decode_chunk`. Its partial results are `attn_decode_chunk`'s, merged by
//! `attn_decode_combine` (docs/RUNTIME.md, "Wide heads and FP8 rows").
//!
//! * `kv_fp8_encode`: stores f32 rows as FP8 rows (the cache write).

use onekernel_macros::kernel;

/// One chunk of one sequence's tokens for a block of up to 16 query heads sharing a KV
/// head: per head the chunk's max `m`, `l = Σ exp(s − m)` and `acc[d] = Σ exp(s − m) v[d]`
/// over the V row's `head_dim` dimensions (`attn_decode_chunk`'s partial rows).
///
/// Grid `[n_chunks, n_kv_heads · ⌈group / 16⌉, n_seq]` (`group` = query heads per KV
/// head). Formats (`k_type`, `v_type`): 0 `f32`, 1 `f16`, 2 `bf16`, 3 `q8_0`, 4 `q4_0` as
/// `attn_decode_chunk`; 5 `fp8_e4m3` and 6 `fp8_mixed`, one layout: a little-endian f32
/// `scale`, `fp8_dims` E4M3 bytes (value `scale · e`, computed in f32: one rounding), then
/// the remaining dimensions as bf16 (`k_fp8_dims` = `k_dim` for `fp8_e4m3`). The E4M3 code
/// `S.1111.111` decodes to NaN.
///
/// Chunks: with `deterministic` 128 tokens from token 0 for a sequence of at most
/// `det_long` tokens, 256 beyond (`attn_decode_combine`'s rule); otherwise
/// `chunk_tokens` (≤ 512). A chunk is taken in tiles of 128 tokens with an online
/// softmax, in a fixed order, so a sequence's bits depend on its chunks only.
///
/// Per tile (docs/RUNTIME.md, "Wide heads and FP8 rows"): the scores are a small matrix product, 16 heads × 128
/// tokens, over slices of 32 dimensions staged in shared memory as f32 (the query slice
/// `[32][16]`, the K slice `[32][128]`, each row element decoded once per workgroup, FP8
/// rows a 32-bit word at a time);
/// each invocation accumulates 4 heads × 4 tokens over the dimensions in order with `fma`.
/// V rows are staged eight at a time (`[8][512]`), and each invocation accumulates
/// 4 heads × 16 dimensions over the tile's tokens in order. 28 KiB of shared memory: it
/// fits lavapipe's 32 KiB.
#[kernel(workgroup = 128, variants(paged = [false, true], deterministic = [false, true]))]
pub fn attn_decode_wide(
    #[len(num_groups().z * n_heads * k_dim)] q: &[f32],
    #[len((n_kv_heads * select(k_type == 0, k_dim * 4, select(k_type <= 2, k_dim * 2, select(k_type <= 4, k_dim / 32 * select(k_type == 3, 34, 18), 4 + 2 * k_dim - k_fp8_dims))) + 3) / 4)]
    k: &[u32],
    #[len((n_kv_heads * select(v_type == 0, head_dim * 4, select(v_type <= 2, head_dim * 2, select(v_type <= 4, head_dim / 32 * select(v_type == 3, 34, 18), 4 + 2 * head_dim - v_fp8_dims))) + 3) / 4)]
    v: &[u32],
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
    #[push] k_fp8_dims: u32,
    #[push] v_fp8_dims: u32,
    #[push] det_long: u32,
    #[spec(default = 576)] k_dim: u32,
    #[spec(default = 512)] head_dim: u32,
) {
    // K slice [32 dimensions][128 tokens], then V rows [8 tokens][512 dimensions].
    let stage = shared::<f32, 4096>();
    // Query slice [32 dimensions][16 heads].
    let qs = shared::<f32, 512>();
    // Scores [16 heads][128 tokens], then the softmax numerators [128 tokens][16 heads]
    // (four heads per 16-byte load in the V pass).
    let sc = shared::<f32, 2048>();
    let cells = shared::<u32, 128>();
    // The softmax's per-lane maxima (words 0–127) and sums (128–255).
    let red = shared::<f32, 256>();
    // Per head of the block: running maximum [0, 16), running sum [16, 32), the tile's
    // rescale factor of the V sums [32, 48).
    let stat = shared::<f32, 48>();
    // Bytes of a row of `dim` elements in format `fmt` (`f8` E4M3 dimensions for 5, 6).
    let row_bytes = |fmt: u32, dim: u32, f8: u32| -> u32 {
        select(fmt == 0, dim * 4, select(fmt <= 2, dim * 2, select(fmt <= 4, dim / 32 * select(fmt == 3, 34u32, 18u32), 4 + 2 * dim - f8)))
    };
    // Element d of the row at byte `row` in one of the formats 0 … 4 (FP8 rows are
    // decoded a word at a time, below).
    let elem = |w: &[u32], row: u32, d: u32, fmt: u32| -> f32 {
        let mut x = 0.0;
        if fmt == 0 {
            x = f32::from_bits(w[row / 4 + d]);
        } else if fmt <= 2 {
            let o = row + 2 * d;
            let bits = (w[o / 4] >> ((o % 4) * 8)) & 65535;
            x = select(fmt == 1, f16_bits_to_f32(bits), f32::from_bits(bits << 16));
        } else if fmt <= 4 {
            let o = row + (d / 32) * select(fmt == 3, 34u32, 18u32);
            let bs = f16_bits_to_f32((w[o / 4] >> ((o % 4) * 8)) & 65535);
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
            x = bs * (qv as f32);
        }
        x
    };
    // The value of E4M3 code `e` (low 8 bits): subnormal m·2⁻⁹, else (8 + m)·2^(e − 10),
    // S.1111.111 NaN; the sign by a multiplication by ±1 (exact).
    let e4m3 = |e: u32| -> f32 {
        select(
            (e & 127) == 127,
            f32::NAN,
            select(((e >> 3) & 15) == 0, ((e & 7) as f32) * 0.001953125, f32::from_bits(((((e >> 3) & 15) + 120) << 23) | ((e & 7) << 20))),
        ) * select(e >= 128, -1.0, 1.0)
    };
    // Element x (0 … 3) of four consecutive dimensions of an FP8 row, from the row's
    // word `w0` (four E4M3 bytes, times the row's `scale`) or words `w0`, `w1` (four bf16).
    let quad_elem = |w0: u32, w1: u32, x: u32, fp8: bool, scale: f32| -> f32 {
        select(fp8, e4m3((w0 >> (8 * x)) & 255) * scale, f32::from_bits(((select(x < 2, w0, w1) >> (16 * (x % 2))) & 65535) << 16))
    };
    let c = group_id().x;
    let b = group_id().z;
    let t0 = local_id().x;
    let group = n_heads / n_kv_heads;
    let blocks = (group + 15) / 16;
    let kvh = group_id().y / blocks;
    let h0 = (group_id().y % blocks) * 16;
    let hn = min(16u32, group - h0);
    let head0 = kvh * group + h0;
    let len = kv_len[b];
    let chunk = select(deterministic, select(len <= det_long, 128u32, 256u32), min(chunk_tokens, 512u32));
    let start = c * chunk;
    let end = min(start + chunk, len);
    let n = select(end > start, end - start, 0u32);
    let k_bytes = row_bytes(k_type, k_dim, k_fp8_dims);
    let v_bytes = row_bytes(v_type, head_dim, v_fp8_dims);
    // ALiBi (ggml): n2 = largest power of two ≤ n_heads.
    let mut n2 = 1u32;
    while n2 * 2 <= n_heads {
        n2 = n2 * 2;
    }
    let nf = n2 as f32;
    // Roles. Score and V passes: heads 4·wq … 4·wq + 3 of the block (one warp each);
    // tokens 4·lane … 4·lane + 3 of the tile, or dimensions 4·lane + 128·i + x. Softmax:
    // head sh, tokens l8 + 8·e.
    let wq = t0 / 32;
    let lane = t0 % 32;
    let sh = t0 / 8;
    let l8 = t0 % 8;
    if t0 < 16 {
        stat[t0] = f32::NEG_INFINITY;
        stat[16 + t0] = 0.0;
    }
    // [16 dimensions (4·i + x)][4 heads]: dimension 128·i + 4·lane + x.
    let mut acc = [0.0; 64];
    for sub in (0..n).step_by(128u32) {
        let tn = min(128u32, n - sub);
        if t0 < tn {
            let t = start + sub + t0;
            let logical = b * pages_per_seq + t / page_size;
            let mut page = logical;
            if paged {
                page = block_table[logical] as u32;
            }
            cells[t0] = (page * page_size + t % page_size) * n_kv_heads + kvh;
        }
        // Also orders the previous tile's last reads of `stage` and `sc`.
        barrier();
        let mut a = [0.0; 16];
        for ds in (0..k_dim).step_by(32u32) {
            for r in 0..4u32 {
                let idx = t0 + r * WORKGROUP_X;
                let hh = idx % 16;
                let d = ds + idx / 16;
                let mut x = 0.0;
                if hh < hn && d < k_dim {
                    x = q[(b * n_heads + head0 + hh) * k_dim + d];
                }
                qs[idx] = x;
            }
            // Invocation t0 decodes token t0's slice; past the tile or the row: zeros,
            // whose products leave the sums as they are. FP8 rows (dimensions and
            // `fp8_dims` multiples of 4, rows whole words) go a word at a time: four E4M3
            // values or, past `fp8_dims`, two words of bf16.
            let row = cells[min(t0, tn - 1)] * k_bytes;
            if k_type >= 5 {
                let scale_k = f32::from_bits(k[row / 4]);
                for w in 0..8u32 {
                    let d0 = ds + 4 * w;
                    let fp8 = d0 < k_fp8_dims;
                    let mut w0 = 0u32;
                    let mut w1 = 0u32;
                    if t0 < tn && d0 < k_dim {
                        let at = select(fp8, row + 4 + d0, row + 4 + k_fp8_dims + 2 * (d0 - min(d0, k_fp8_dims))) / 4;
                        w0 = k[at];
                        if !fp8 {
                            w1 = k[at + 1];
                        }
                    }
                    for x in 0..4u32 {
                        stage[(4 * w + x) * 128 + t0] = select(t0 < tn && d0 < k_dim, quad_elem(w0, w1, x, fp8, scale_k), 0.0);
                    }
                }
            } else {
                for dd in 0..32u32 {
                    let d = ds + dd;
                    let mut x = 0.0;
                    if t0 < tn && d < k_dim {
                        x = elem(k, row, d, k_type);
                    }
                    stage[dd * 128 + t0] = x;
                }
            }
            barrier();
            for dd in 0..32u32 {
                let mut qv = [0.0; 4];
                let mut kv = [0.0; 4];
                load_words(qv, 0, qs, dd * 16 + 4 * wq, 4);
                load_words(kv, 0, stage, dd * 128 + 4 * lane, 4);
                for hh in 0..4u32 {
                    for tt in 0..4u32 {
                        a[hh * 4 + tt] = fma(qv[hh], kv[tt], a[hh * 4 + tt]);
                    }
                }
            }
            barrier();
        }
        for hh in 0..4u32 {
            let hb = 4 * wq + hh;
            let h = head0 + hb;
            for tt in 0..4u32 {
                let i = 4 * lane + tt;
                let mut s = f32::NEG_INFINITY;
                if hb < hn && i < tn {
                    s = a[hh * 4 + tt] * scale;
                    if softcap > 0.0 {
                        s = softcap * tanh(s / softcap);
                    }
                    if has_mask != 0 {
                        let slope_lo = exp2(-(max_bias / nf) * ((h + 1) as f32));
                        let slope_hi = exp2(-(max_bias / 2.0 / nf) * ((2 * (h - min(h, n2)) + 1) as f32));
                        let slope = select(max_bias > 0.0, select(h < n2, slope_lo, slope_hi), 1.0);
                        s = fma(slope, mask[b * pages_per_seq * page_size + start + sub + i], s);
                    }
                }
                sc[hb * 128 + i] = s;
            }
        }
        barrier();
        // Online softmax: the tile's maximum per head (eight lanes, added in lane order),
        // the running maximum, the numerators and their sum; −inf scores (past the
        // tile's last token, heads past the block's last) give 0.
        let mut sv = [0.0; 16];
        let mut mx = f32::NEG_INFINITY;
        for e in 0..16u32 {
            sv[e] = sc[sh * 128 + l8 + 8 * e];
            mx = max(mx, sv[e]);
        }
        red[t0] = mx;
        barrier();
        let mut m_new = stat[sh];
        for l2 in 0..8u32 {
            m_new = max(m_new, red[sh * 8 + l2]);
        }
        let mut ls = 0.0;
        for e in 0..16u32 {
            let p = select(sv[e] == f32::NEG_INFINITY, 0.0, exp(sv[e] - m_new));
            sv[e] = p;
            ls += p;
        }
        // Every score is read (above): the numerators go over them, token-major.
        barrier();
        for e in 0..16u32 {
            sc[(l8 + 8 * e) * 16 + sh] = sv[e];
        }
        red[128 + t0] = ls;
        barrier();
        if l8 == 0 {
            let mut l = 0.0;
            for l2 in 0..8u32 {
                l += red[128 + sh * 8 + l2];
            }
            let m_old = stat[sh];
            let alpha = select(m_old == f32::NEG_INFINITY, 0.0, exp(m_old - m_new));
            stat[sh] = m_new;
            stat[16 + sh] = fma(stat[16 + sh], alpha, l);
            stat[32 + sh] = alpha;
        }
        barrier();
        let mut alpha = [0.0; 4];
        load_words(alpha, 0, stat, 32 + 4 * wq, 4);
        // Nested loops of at most 16 trips (unrolled: `acc` stays in registers).
        for i in 0..16u32 {
            for hh in 0..4u32 {
                acc[i * 4 + hh] = acc[i * 4 + hh] * alpha[hh];
            }
        }
        for t8 in (0..tn).step_by(8u32) {
            // V rows t8 … t8 + 7: invocation t0 decodes dimensions t0 % 16 + 16·m of row
            // t8 + t0 / 16 (consecutive invocations, consecutive elements); FP8 rows the
            // four dimensions 4·(t0 % 16) + 64·m … + 3, a word at a time.
            let j = t0 / 16;
            if t8 + j < tn {
                let row = cells[t8 + j] * v_bytes;
                if v_type >= 5 {
                    let scale_v = f32::from_bits(v[row / 4]);
                    for mm in 0..8u32 {
                        let d0 = 4 * (t0 % 16) + 64 * mm;
                        if d0 < head_dim {
                            let fp8 = d0 < v_fp8_dims;
                            let at = select(fp8, row + 4 + d0, row + 4 + v_fp8_dims + 2 * (d0 - min(d0, v_fp8_dims))) / 4;
                            let w0 = v[at];
                            let mut w1 = 0u32;
                            if !fp8 {
                                w1 = v[at + 1];
                            }
                            for x in 0..4u32 {
                                stage[j * 512 + d0 + x] = quad_elem(w0, w1, x, fp8, scale_v);
                            }
                        }
                    }
                } else {
                    for mm in 0..32u32 {
                        let d = t0 % 16 + 16 * mm;
                        if d < head_dim {
                            let x = elem(v, row, d, v_type);
                            stage[j * 512 + d] = x;
                        }
                    }
                }
            }
            barrier();
            if 4 * wq < hn {
                for jj in 0..8u32 {
                    if t8 + jj < tn {
                        let mut pw = [0.0; 4];
                        load_words(pw, 0, sc, (t8 + jj) * 16 + 4 * wq, 4);
                        for i in 0..4u32 {
                            if 128 * i + 4 * lane < head_dim {
                                let mut vv = [0.0; 4];
                                load_words(vv, 0, stage, jj * 512 + 128 * i + 4 * lane, 4);
                                for x in 0..4u32 {
                                    for hh in 0..4u32 {
                                        acc[(4 * i + x) * 4 + hh] = fma(pw[hh], vv[x], acc[(4 * i + x) * 4 + hh]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            barrier();
        }
    }
    if n > 0 {
        if l8 == 0 && sh < hn {
            let row = (b * n_heads + head0 + sh) * n_chunks + c;
            part_m[row] = stat[sh];
            part_l[row] = stat[16 + sh];
        }
        for hh in 0..4u32 {
            let hb = 4 * wq + hh;
            if hb < hn {
                for i in 0..4u32 {
                    for x in 0..4u32 {
                        let d = 128 * i + 4 * lane + x;
                        if d < head_dim {
                            part_acc[((b * n_heads + head0 + hb) * n_chunks + c) * head_dim + d] = acc[(4 * i + x) * 4 + hh];
                        }
                    }
                }
            }
        }
    }
}

/// Stores `n_rows` f32 rows of `dim` elements (finite) as FP8 rows, one row per
/// workgroup: `scale = amax / 448` over the first `fp8_dims` elements (computed as
/// `amax / 448.0`, the library's correctly rounded division), each of them the E4M3 code
/// of `x / scale` (round to nearest even on the f32 bits, saturating at ±448, the sign
/// kept; all codes 0 where `scale` is 0), then the others as bf16 (round to nearest even).
/// Row layout as `attn_decode_wide`'s formats 5 (`fp8_dims = dim`) and 6; `dim` and
/// `fp8_dims` multiples of 4, so rows are whole words. Bit for bit
/// `onekernel_ops::attention::KvFormat::encode_row`.
#[kernel(workgroup = 128)]
pub fn kv_fp8_encode(
    #[len(n_rows * dim)] x: &[f32],
    #[len(n_rows * (4 + 2 * dim - fp8_dims) / 4)] rows: &mut [u32],
    #[push] n_rows: u32,
    #[push] dim: u32,
    #[push] fp8_dims: u32,
) {
    let r = group_id().x;
    let t0 = local_id().x;
    let base = r * ((4 + 2 * dim - fp8_dims) / 4);
    let mut m = 0.0;
    for i in (t0..fp8_dims).step_by(WORKGROUP_X) {
        m = max(m, x[r * dim + i].abs());
    }
    let amax = workgroup_max(m);
    let scale = amax / 448.0;
    if t0 == 0 {
        rows[base] = scale.to_bits();
    }
    for w in (t0..fp8_dims / 4).step_by(WORKGROUP_X) {
        let mut word = 0u32;
        for k in 0..4u32 {
            let mut code = 0u32;
            if scale > 0.0 {
                let v = (x[r * dim + 4 * w + k] / scale).to_bits();
                let ef = ((v >> 23) & 0xff) as i32;
                let mut e = ef - 127;
                let mut full = (v & 0x7f_ffffu32) | 0x80_0000u32;
                if ef == 0 {
                    e = -126;
                    full = v & 0x7f_ffffu32;
                }
                let ee = max(e, -6);
                let shift = (20 + ee - e) as u32;
                let mut qv = 0u32;
                if shift <= 24 {
                    qv = full >> shift;
                    let rem = full & ((1u32 << shift) - 1);
                    let half = 1u32 << (shift - 1);
                    if rem > half || (rem == half && (qv & 1) == 1) {
                        qv = qv + 1;
                    }
                }
                code = min((((ee + 7) as u32) << 3) + qv - 8, 0x7eu32) | ((v >> 24) & 0x80);
            }
            word = word | (code << (8 * k));
        }
        rows[base + 1 + w] = word;
    }
    for w in (t0..(dim - fp8_dims) / 2).step_by(WORKGROUP_X) {
        let lo = x[r * dim + fp8_dims + 2 * w].to_bits();
        let hi = x[r * dim + fp8_dims + 2 * w + 1].to_bits();
        let blo = (lo + 0x7fff + ((lo >> 16) & 1)) >> 16;
        let bhi = (hi + 0x7fff + ((hi >> 16) & 1)) >> 16;
        rows[base + 1 + fp8_dims / 4 + w] = blo | (bhi << 16);
    }
}
