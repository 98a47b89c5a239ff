//! GPU encoders (quantize kernels) of the TBQ and QJL formats. The trellis encoder of
//! turbo3_tcq stays on the host (`onekernel_ops::kvquant::codec::encode_tcq`): a
//! 512-state Viterbi per row is sequential work.

use onekernel_macros::kernel;

/// `block_tbq3_0` (`bits = 3`, 14 bytes) or `block_tbq4_0` (`bits = 4`, 18 bytes) for
/// each 32 elements of `x`, one invocation per block: `y = H32n(x ⊙ s)`, `d = √(Σy²/32)`
/// stored as IEEE f16 (round to nearest even), codes of `y / d`: TBQ3 the nearest
/// level (ties to the lower index), TBQ4 the first `i` with `v < mids[i]` (the eliza
/// reference's rule); all codes 0 when `d = 0`.
#[kernel(workgroup = 64)]
pub fn tbq_quantize(
    #[len(n_blocks * 32)] x: &[f32],
    #[len(32)] signs: &[f32],
    #[len(select(bits == 3, 8, 16))] levels: &[f32],
    #[len(select(bits == 3, 1, 15))] mids: &[f32],
    #[len(n_blocks * select(bits == 3, 14, 18))] out: &mut [u8],
    #[push] n_blocks: u32,
    #[push] bits: u32,
) {
    // IEEE f32 → f16 bits, round to nearest even (finite input; overflow gives inf).
    let f16_bits = |v: f32| -> u32 {
        let b = v.to_bits();
        let e = ((b >> 23) & 255) as i32 - 112;
        let m = b & 8388607;
        let mut h = 0u32;
        if e >= 31 {
            h = 31744;
        } else if e > 0 {
            let q = ((e as u32) << 10) | (m >> 13);
            let rem = m & 8191;
            h = q + select(rem > 4096 || (rem == 4096 && (q & 1) == 1), 1u32, 0u32);
        } else if e >= -10 {
            let full = m | 8388608;
            let shift = (14 - e) as u32;
            let q = full >> shift;
            let rem = full & ((1u32 << shift) - 1);
            let halfway = 1u32 << (shift - 1);
            h = q + select(rem > halfway || (rem == halfway && (q & 1) == 1), 1u32, 0u32);
        }
        ((b >> 16) & 32768) | h
    };
    let blk = global_id().x;
    if blk < n_blocks {
        let mut y = [0.0; 32];
        let mut sq = 0.0;
        for i in 0..32u32 {
            let mut acc = 0.0;
            for j in 0..32u32 {
                let v = signs[j] * x[blk * 32 + j];
                acc = select((i & j).count_ones() % 2 == 0, acc + v, acc - v);
            }
            y[i] = acc * 0.1767766952966369;
            sq = fma(y[i], y[i], sq);
        }
        let d = sqrt(sq / 32.0);
        let dh = f16_bits(d);
        let size = select(bits == 3, 14u32, 18u32);
        let base = blk * size;
        out[base] = dh & 255;
        out[base + 1] = dh >> 8;
        let mut codes = [0u32; 32];
        if d > 0.0 {
            for i in 0..32u32 {
                let v = y[i] / d;
                let mut c = 0u32;
                if bits == 3 {
                    for l in 1..8u32 {
                        if abs(v - levels[l]) < abs(v - levels[c]) {
                            c = l;
                        }
                    }
                } else {
                    while c < 15 && !(v < mids[c]) {
                        c += 1;
                    }
                }
                codes[i] = c;
            }
        }
        if bits == 3 {
            // 96-bit little-endian stream, code i at bits 3i … 3i + 2.
            for b in 0..12u32 {
                let mut byte = 0u32;
                for k in 0..8u32 {
                    let bit = 8 * b + k;
                    byte = byte | (((codes[bit / 3] >> (bit % 3)) & 1) << k);
                }
                out[base + 2 + b] = byte;
            }
        } else {
            for j in 0..16u32 {
                out[base + 2 + j] = codes[j] | (codes[j + 16] << 4);
            }
        }
    }
}

/// `block_qjl1_256` of each 128-element key, one workgroup per key: sign bits of
/// `sketch_j = Σ_i k_i·prj[i·256 + j]` (1 iff > 0) and bf16 (round to nearest even) of
/// the f32 norm ‖k‖.
#[kernel(workgroup = 128)]
pub fn qjl_quantize(#[len(num_groups().x * 128)] keys: &[f32], #[len(32768)] prj: &[f32], #[len(num_groups().x * 34)] out: &mut [u8]) {
    let bits = shared::<u32, 256>();
    let r = group_id().x;
    let lid = local_id().x;
    for j in (lid..256u32).step_by(WORKGROUP_X) {
        let mut s = 0.0;
        for i in 0..128u32 {
            s = fma(keys[r * 128 + i], prj[i * 256 + j], s);
        }
        bits[j] = select(s > 0.0, 1u32, 0u32);
    }
    let mut sq = 0.0;
    for i in (lid..128u32).step_by(WORKGROUP_X) {
        sq = fma(keys[r * 128 + i], keys[r * 128 + i], sq);
    }
    let total = workgroup_sum(sq);
    if lid < 32 {
        let mut byte = 0u32;
        for k in 0..8u32 {
            byte = byte | (bits[lid * 8 + k] << k);
        }
        out[r * 34 + lid] = byte;
    }
    if lid == 0 {
        let u = sqrt(total).to_bits();
        let bf = (u + 32767 + ((u >> 16) & 1)) >> 16;
        out[r * 34 + 32] = bf & 255;
        out[r * 34 + 33] = bf >> 8;
    }
}
