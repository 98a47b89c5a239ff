//! NVFP4 on the host, bit for bit the kernels' arithmetic (docs/NVFP4.md): E4M3 and
//! E2M1 rounding to nearest even with saturation, the two-level quantization with a
//! global scale computed from the data, dequantization.
//!
//! Both roundings use one integer rule: a finite f32 `v = full · 2^(E − 23)` (`full` the
//! 24-bit significand) goes to the grid of step `2^(max(E, emin) − mbits)`,
//! `q = RNE(full >> shift)` with `shift = 23 − mbits + max(E, emin) − E`, and the code is
//! `((max(E, emin) + bias) << mbits) + q − 2^mbits` (subnormals and the carry into the
//! next binade fall out of the same formula), saturated at the largest finite code.

/// E4M3's largest finite value.
pub const E4M3_MAX: f32 = 448.0;
/// E2M1's largest value.
pub const E2M1_MAX: f32 = 6.0;
/// Values per block.
pub const BLOCK: usize = 16;

/// Rounds |v| (finite) to the grid of a format with `mbits` mantissa bits, minimum
/// normal exponent `emin` and exponent bias `bias`; the magnitude code, unsaturated.
fn round_magnitude(v: f32, mbits: u32, emin: i32, bias: i32) -> u32 {
    let b = v.to_bits() & 0x7fff_ffff;
    let (e_field, m) = ((b >> 23) as i32, b & 0x7f_ffff);
    // f32 subnormals (and zero) count as their own value with E = −126.
    let (e, full) = if e_field == 0 { (-126, m) } else { (e_field - 127, m | 0x80_0000) };
    let ee = e.max(emin);
    // At least 23 − mbits ≥ 20: the grid is never finer than f32's.
    let shift = (23 - mbits as i32 + ee - e) as u32;
    let q = if shift > 24 {
        0
    } else {
        let q = full >> shift;
        let rem = full & ((1u32 << shift) - 1);
        let half = 1u32 << (shift - 1);
        if rem > half || (rem == half && q & 1 == 1) {
            q + 1
        } else {
            q
        }
    };
    (((ee + bias) as u32) << mbits) + q - (1 << mbits)
}

/// E4M3 code of `v` (finite), round to nearest even, saturating at ±448.
pub fn e4m3_encode(v: f32) -> u8 {
    let code = round_magnitude(v, 3, -6, 7).min(0x7e);
    code as u8 | if v.is_sign_negative() { 0x80 } else { 0 }
}

/// The value of an E4M3 code (`S.1111.111` is NaN).
pub fn e4m3_decode(c: u8) -> f32 {
    let (s, e, m) = (c >> 7, ((c >> 3) & 0xf) as i32, (c & 7) as f32);
    let mag = if e == 0xf && m == 7.0 {
        f32::NAN
    } else if e == 0 {
        m * 2f32.powi(-9)
    } else {
        (1.0 + m / 8.0) * 2f32.powi(e - 7)
    };
    if s == 1 {
        -mag
    } else {
        mag
    }
}

/// E2M1 code (4 bits) of `v` (finite), round to nearest even, saturating at ±6; a value
/// that rounds to zero is +0.
pub fn e2m1_encode(v: f32) -> u8 {
    let code = round_magnitude(v, 1, 0, 1).min(7);
    // A code carries a sign only with a magnitude: what rounds to zero is +0.
    code as u8 | if v.is_sign_negative() && code != 0 { 8 } else { 0 }
}

/// The value of an E2M1 code.
pub fn e2m1_decode(c: u8) -> f32 {
    const MAG: [f32; 8] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let v = MAG[(c & 7) as usize];
    if c & 8 != 0 {
        -v
    } else {
        v
    }
}

/// A tensor quantized to NVFP4: `[rows][cols/2]` packed values (element 2k in the low
/// nibble of byte k), `[rows][cols/16]` E4M3 block scales, and the f32 global scale.
#[derive(Clone, Debug, PartialEq)]
pub struct Nvfp4 {
    /// Rows.
    pub rows: usize,
    /// Columns (a multiple of 16).
    pub cols: usize,
    /// Packed E2M1 values.
    pub packed: Vec<u8>,
    /// E4M3 block scales.
    pub scales: Vec<u8>,
    /// Global scale.
    pub global: f32,
}

/// The global scale of `x`: `amax / (6 · 448)` (f32 division, correctly rounded), the
/// largest magnitude over all of `x`.
pub fn global_scale(x: &[f32]) -> f32 {
    let amax = x.iter().fold(0.0f32, |m, v| if v.abs() > m { v.abs() } else { m });
    amax / (E2M1_MAX * E4M3_MAX)
}

/// Quantizes `x` (`[rows][cols]`, finite) with the global scale `global`, in the
/// kernels' order: per block `d = 6 · global`, `s = E4M3(bmax / d)`, `t = s · global`,
/// `q_i = E2M1(x_i / t)`; a block whose scale code is 0 stores zeros.
pub fn quantize(x: &[f32], rows: usize, cols: usize, global: f32) -> Nvfp4 {
    let mut packed = vec![0u8; rows * cols / 2];
    let mut scales = vec![0u8; rows * cols / BLOCK];
    let d = E2M1_MAX * global;
    for (b, block) in x.chunks(BLOCK).enumerate() {
        let bmax = block.iter().fold(0.0f32, |m, v| if v.abs() > m { v.abs() } else { m });
        let s = if d > 0.0 { e4m3_encode(bmax / d) } else { 0 };
        scales[b] = s;
        let t = e4m3_decode(s) * global;
        for (i, &v) in block.iter().enumerate() {
            let q = if s == 0 { 0 } else { e2m1_encode(v / t) };
            let at = b * BLOCK + i;
            packed[at / 2] |= q << (4 * (at % 2));
        }
    }
    Nvfp4 { rows, cols, packed, scales, global }
}

/// The values an NVFP4 tensor stands for: `q · (s · global)`.
pub fn dequantize(t: &Nvfp4) -> Vec<f32> {
    (0..t.rows * t.cols)
        .map(|i| {
            let q = (t.packed[i / 2] >> (4 * (i % 2))) & 0xf;
            e2m1_decode(q) * (e4m3_decode(t.scales[i / BLOCK]) * t.global)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_rounds_to_nearest_even_and_saturates() {
        // Every code decodes and re-encodes to itself (NaN and −0 aside).
        for c in 0u8..=0x7e {
            assert_eq!(e4m3_encode(e4m3_decode(c)), c, "code {c:#x}");
            assert_eq!(e4m3_encode(-e4m3_decode(c)), c | 0x80);
        }
        assert_eq!(e4m3_decode(0x7e), 448.0);
        assert_eq!(e4m3_decode(1), 2f32.powi(-9));
        assert!(e4m3_decode(0x7f).is_nan() && e4m3_decode(0xff).is_nan());
        // Ties: 1 + 1/16 lies between 1 (even) and 1.125; 1 + 3/16 between 1.125 and 1.25 (even).
        assert_eq!(e4m3_decode(e4m3_encode(1.0625)), 1.0);
        assert_eq!(e4m3_decode(e4m3_encode(1.1875)), 1.25);
        // Saturation: 464 would round to 480, past the largest finite value.
        assert_eq!(e4m3_encode(464.0), 0x7e);
        assert_eq!(e4m3_encode(1e30), 0x7e);
        // Subnormals: half the smallest rounds to 0 (even), three halves to 2·2⁻⁹.
        assert_eq!(e4m3_encode(2f32.powi(-10)), 0);
        assert_eq!(e4m3_encode(3.0 * 2f32.powi(-10)), 2);
        // The top of the subnormals carries into the first normal.
        assert_eq!(e4m3_encode(7.6 * 2f32.powi(-9)), 8);
        // Against brute force: the nearest code, ties to the even code.
        let mut r = 0x1234_5678u32;
        for _ in 0..100_000 {
            r ^= r << 13;
            r ^= r >> 17;
            r ^= r << 5;
            let v = f32::from_bits(r & 0x43ffffff); // positive, below 512
            let want = (0u8..=0x7e)
                .min_by(|&a, &b| {
                    let (da, db) = ((e4m3_decode(a) as f64 - v as f64).abs(), (e4m3_decode(b) as f64 - v as f64).abs());
                    da.total_cmp(&db).then((a & 1).cmp(&(b & 1)))
                })
                .unwrap();
            assert_eq!(e4m3_encode(v), want, "{v}");
        }
    }

    #[test]
    fn e2m1_rounds_to_nearest_even_and_saturates() {
        for c in 0u8..8 {
            assert_eq!(e2m1_encode(e2m1_decode(c)), c);
            assert_eq!(e2m1_encode(-e2m1_decode(c)), if c == 0 { 0 } else { c | 8 });
        }
        assert_eq!(e2m1_encode(-0.1), 0, "−0.1 rounds to +0");
        for (v, want) in
            [(0.25, 0.0), (0.75, 1.0), (1.25, 1.0), (1.75, 2.0), (2.5, 2.0), (3.5, 4.0), (5.0, 4.0), (5.5, 6.0), (7.0, 6.0), (100.0, 6.0)]
        {
            assert_eq!(e2m1_decode(e2m1_encode(v)), want, "{v}");
            assert_eq!(e2m1_decode(e2m1_encode(-v)), -want, "-{v}");
        }
    }

    #[test]
    fn a_block_round_trips_within_the_formats_bound() {
        let x: Vec<f32> = (0..64).map(|i| ((i * 37 % 23) as f32 - 11.0) * 0.37).collect();
        let g = global_scale(&x);
        let t = quantize(&x, 2, 32, g);
        let y = dequantize(&t);
        for (b, (xb, yb)) in x.chunks(16).zip(y.chunks(16)).enumerate() {
            let bmax = xb.iter().fold(0.0f32, |m, v| m.max(v.abs()));
            for (a, c) in xb.iter().zip(yb) {
                // Half of E2M1's widest step (2, between 4 and 6) at the block's scale,
                // plus the scale's own rounding (E4M3: 1/16 relative).
                assert!((a - c).abs() <= bmax / 6.0 * (1.0 + 0.0625) + 1e-6, "block {b}: {a} vs {c}");
            }
        }
    }
}
