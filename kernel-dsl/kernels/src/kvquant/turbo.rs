//! TurboQuant score kernels (FORMATS.md §1–3): one query row against `n_kv` cached rows
//! of 128 elements in one of five layouts, chosen by the `format` push constant:
//!
//! | format | layout | bytes / row | score |
//! |---|---|---|---|
//! | 0 | legacy `block_turbo3_0` ×4 (norm, 2+1-bit split indices) | 56 | rotated domain |
//! | 1 | `block_tbq3_0` ×4 (d, 96-bit stream of 3-bit codes) | 56 | rotated or real domain |
//! | 2 | legacy 66-byte `block_turbo4_0` (norm, 128 nibbles, even j low) | 66 | rotated domain |
//! | 3 | `block_tbq4_0` ×4 (d, q4_0 nibble order) | 72 | rotated or real domain |
//! | 4 | `turbo3_tcq` (norm, 392-bit trellis stream) | 52 | rotated domain |
//!
//! Rotated domain: `score = Σ_i q[i]·k̂[i]` with `q` consumed as given (the host rotated
//! it). Real domain (`real_domain = 1`, TBQ formats only): `score = ⟨q, uncond(r)⟩`,
//! computed as `⟨H32n(q ⊙ s), r⟩` with the query transformed once per workgroup.
//! `levels` holds the format's codebook (8, 8, 16, 16 or 512 values), `signs` the TBQ
//! signs `s`.

use onekernel_macros::kernel;

/// Scores of `num_groups().y` queries against `n_kv` rows in `format` (see the module).
#[kernel(workgroup = 128)]
pub fn turbo_score(
    #[len(num_groups().y * 128)] q: &[f32],
    #[len((n_kv * select(format == 2, 66, select(format == 3, 72, select(format == 4, 52, 56))) + 3) / 4)] k: &[u32],
    #[len(select(format <= 1, 8, select(format == 4, 512, 16)))] levels: &[f32],
    #[len(32)] signs: &[f32],
    #[len(num_groups().y * n_kv)] scores: &mut [f32],
    #[push] n_kv: u32,
    #[push] format: u32,
    #[push] real_domain: u32,
) {
    let qt = shared::<f32, 128>();
    let byte = |w: &[u32], o: u32| -> u32 { (w[o / 4] >> ((o % 4) * 8)) & 255 };
    // Every 16-bit field sits at an even byte: it never straddles a word.
    let half = |w: &[u32], o: u32| -> f32 { f16_bits_to_f32((w[o / 4] >> ((o % 4) * 8)) & 65535) };
    let qi = group_id().y;
    let lid = local_id().x;
    let precondition = real_domain != 0 && (format == 1 || format == 3);
    for i in (lid..128u32).step_by(WORKGROUP_X) {
        let mut v = q[qi * 128 + i];
        if precondition {
            // H32n(q ⊙ s) of i's 32-element block, row i % 32 of the Sylvester matrix.
            let base = qi * 128 + i - i % 32;
            let mut acc = 0.0;
            for j in 0..32u32 {
                let x = signs[j] * q[base + j];
                acc = select(((i % 32) & j).count_ones() % 2 == 0, acc + x, acc - x);
            }
            v = acc * 0.1767766952966369;
        }
        qt[i] = v;
    }
    barrier();
    let t = global_id().x;
    if t < n_kv {
        let mut score = 0.0;
        if format == 0 {
            for b in 0..4u32 {
                let base = t * 56 + b * 14;
                let norm = half(k, base);
                let mut part = 0.0;
                for j in 0..32u32 {
                    let low = (byte(k, base + 2 + j / 4) >> (2 * (j % 4))) & 3;
                    let high = (byte(k, base + 10 + j / 8) >> (j % 8)) & 1;
                    part = fma(qt[b * 32 + j], levels[low | (high << 2)], part);
                }
                score = fma(part, norm, score);
            }
        } else if format == 1 {
            for b in 0..4u32 {
                let base = t * 56 + b * 14;
                let d = half(k, base);
                let mut part = 0.0;
                for j in 0..32u32 {
                    let o = base + 2 + (3 * j) / 8;
                    let shift = (3 * j) % 8;
                    let mut bits = byte(k, o);
                    if shift > 5 {
                        bits = bits | (byte(k, o + 1) << 8);
                    }
                    part = fma(qt[b * 32 + j], levels[(bits >> shift) & 7], part);
                }
                score = fma(part, d, score);
            }
        } else if format == 2 {
            let base = t * 66;
            let norm = half(k, base);
            for j in 0..128u32 {
                let v = byte(k, base + 2 + j / 2);
                score = fma(qt[j], levels[select(j % 2 == 0, v & 15, v >> 4)], score);
            }
            score = score * norm;
        } else if format == 3 {
            for b in 0..4u32 {
                let base = t * 72 + b * 18;
                let d = half(k, base);
                let mut part = 0.0;
                for j in 0..32u32 {
                    let v = byte(k, base + 2 + j % 16);
                    part = fma(qt[b * 32 + j], levels[select(j < 16, v & 15, v >> 4)], part);
                }
                score = fma(part, d, score);
            }
        } else {
            let base = t * 52;
            let norm = half(k, base);
            for j in 0..128u32 {
                // State j: the 9 bits starting at bit 3j of the stream (6 prefix bits, then
                // one 3-bit symbol per step); the pad byte keeps o + 1 inside the block.
                let o = base + 2 + (3 * j) / 8;
                let state = ((byte(k, o) | (byte(k, o + 1) << 8)) >> ((3 * j) % 8)) & 511;
                score = fma(qt[j], levels[state], score);
            }
            score = score * norm;
        }
        scores[qi * n_kv + t] = score;
    }
}
