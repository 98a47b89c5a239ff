//! KV-cache element formats of decode attention and their byte images: what the
//! `k_type` / `v_type` push constants of `attn_decode_chunk` and `attn_decode_wide`
//! select, how a `[D]` row is stored, and the values a stored row holds.

use crate::nvfp4::codec::{e4m3_decode, e4m3_encode, E4M3_MAX};
use onekernel_dsl::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};

/// A cache element format.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum KvFormat {
    /// IEEE single.
    F32,
    /// IEEE half.
    F16,
    /// bfloat16.
    Bf16,
    /// ggml `q8_0`: per 32 elements an f16 scale `d` and 32 × i8 `q`, value `d·q`.
    Q8_0,
    /// ggml `q4_0`: per 32 elements an f16 `d` and 16 bytes of nibbles, value `d·(n − 8)`.
    Q4_0,
    /// A little-endian f32 `scale`, then D bytes of OCP FP8 E4M3 (value `scale · e`;
    /// `S.1111.111` is NaN). Rows of D a multiple of 4 (whole words).
    Fp8E4m3,
    /// A little-endian f32 `scale`, `fp8_dims` E4M3 bytes (the first dimensions, value
    /// `scale · e`), then the other `D − fp8_dims` dimensions as bf16, unscaled (the
    /// rotary dimensions of a mixed row; 448 + 64 at D = 512). `fp8_dims` a multiple of 4.
    Fp8Mixed {
        /// Dimensions stored as E4M3.
        fp8_dims: u32,
    },
}

impl KvFormat {
    /// The five formats of `attn_decode_chunk` (and of the fixtures' `attention/`
    /// schema), in push-constant order; `attn_decode_wide` also reads the FP8 rows.
    pub const ALL: [KvFormat; 5] = [KvFormat::F32, KvFormat::F16, KvFormat::Bf16, KvFormat::Q8_0, KvFormat::Q4_0];

    /// The value of the kernels' `k_type` / `v_type` push constant.
    pub fn code(self) -> u32 {
        match self {
            KvFormat::F32 => 0,
            KvFormat::F16 => 1,
            KvFormat::Bf16 => 2,
            KvFormat::Q8_0 => 3,
            KvFormat::Q4_0 => 4,
            KvFormat::Fp8E4m3 => 5,
            KvFormat::Fp8Mixed { .. } => 6,
        }
    }

    /// Whether rows start with an f32 scale and hold E4M3 bytes (only
    /// `attn_decode_wide` reads them).
    pub fn is_fp8(self) -> bool {
        matches!(self, KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. })
    }

    /// The E4M3 dimensions of a row of `d` elements (the kernels' `k_fp8_dims` /
    /// `v_fp8_dims`; 0 for the other formats).
    pub fn fp8_dims(self, d: u32) -> u32 {
        match self {
            KvFormat::Fp8E4m3 => d,
            KvFormat::Fp8Mixed { fp8_dims } => fp8_dims,
            _ => 0,
        }
    }

    /// The fixture schema's name (`f32`, `q8_0` …).
    pub fn name(self) -> &'static str {
        match self {
            KvFormat::F32 => "f32",
            KvFormat::F16 => "f16",
            KvFormat::Bf16 => "bf16",
            KvFormat::Q8_0 => "q8_0",
            KvFormat::Q4_0 => "q4_0",
            KvFormat::Fp8E4m3 => "fp8_e4m3",
            KvFormat::Fp8Mixed { .. } => "fp8_mixed",
        }
    }

    /// The format of a schema name; `fp8_dims` is the schema's field of that name,
    /// which `fp8_mixed` requires (`None` without it).
    pub fn parse(name: &str, fp8_dims: Option<u32>) -> Option<Self> {
        match name {
            "fp8_e4m3" => Some(KvFormat::Fp8E4m3),
            "fp8_mixed" => fp8_dims.map(|fp8_dims| KvFormat::Fp8Mixed { fp8_dims }),
            _ => Self::ALL.into_iter().find(|f| f.name() == name),
        }
    }

    /// Whether rows are ggml blocks of 32 elements.
    pub fn is_block(self) -> bool {
        matches!(self, KvFormat::Q8_0 | KvFormat::Q4_0)
    }

    /// Bytes of one row of `d` elements (`d` a multiple of 32 for block formats).
    pub fn row_bytes(self, d: usize) -> usize {
        match self {
            KvFormat::F32 => 4 * d,
            KvFormat::F16 | KvFormat::Bf16 => 2 * d,
            KvFormat::Q8_0 => d / 32 * 34,
            KvFormat::Q4_0 => d / 32 * 18,
            KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. } => 4 + 2 * d - self.fp8_dims(d as u32) as usize,
        }
    }

    /// Stores one row (ggml's reference quantizers for the block formats).
    pub fn encode_row(self, x: &[f32]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.row_bytes(x.len()));
        match self {
            KvFormat::F32 => x.iter().for_each(|v| out.extend(v.to_le_bytes())),
            KvFormat::F16 => x.iter().for_each(|v| out.extend(f32_to_f16(*v).to_le_bytes())),
            KvFormat::Bf16 => x.iter().for_each(|v| out.extend(f32_to_bf16(*v).to_le_bytes())),
            KvFormat::Q8_0 => {
                for blk in x.chunks(32) {
                    let amax = blk.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                    let d = amax / 127.0;
                    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                    out.extend(f32_to_f16(d).to_le_bytes());
                    out.extend(blk.iter().map(|v| (v * id).round() as i8 as u8));
                }
            }
            KvFormat::Q4_0 => {
                for blk in x.chunks(32) {
                    let max = blk.iter().fold(0.0f32, |m, &v| if v.abs() > m.abs() { v } else { m });
                    let d = max / -8.0;
                    let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                    let q: Vec<u8> = blk.iter().map(|v| ((v * id + 8.5) as i8).clamp(0, 15) as u8).collect();
                    out.extend(f32_to_f16(d).to_le_bytes());
                    out.extend((0..16).map(|j| q[j] | (q[j + 16] << 4)));
                }
            }
            KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. } => {
                // `kv_fp8_encode`'s arithmetic: scale = amax / 448 in f32, codes of
                // x / scale rounded to nearest even and saturated, zeros where scale = 0.
                let f8 = self.fp8_dims(x.len() as u32) as usize;
                let amax = x[..f8].iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let scale = amax / E4M3_MAX;
                out.extend(scale.to_le_bytes());
                out.extend(x[..f8].iter().map(|v| if scale > 0.0 { e4m3_encode(v / scale) } else { 0 }));
                x[f8..].iter().for_each(|v| out.extend(f32_to_bf16(*v).to_le_bytes()));
            }
        }
        out
    }

    /// The values a stored row of `d` elements holds, in float64: exact for every format
    /// (the reference's view; an FP8 element is `scale · e` without rounding).
    pub fn decode_row_f64(self, bytes: &[u8], d: usize) -> Vec<f64> {
        match self {
            KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. } => {
                let f8 = self.fp8_dims(d as u32) as usize;
                let scale = f32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as f64;
                let bf = |i: usize| bf16_to_f32(u16::from_le_bytes([bytes[4 + f8 + 2 * i], bytes[5 + f8 + 2 * i]])) as f64;
                (0..d).map(|i| if i < f8 { scale * e4m3_decode(bytes[4 + i]) as f64 } else { bf(i - f8) }).collect()
            }
            _ => self.decode_row(bytes, d).into_iter().map(f64::from).collect(),
        }
    }

    /// The values a stored row of `d` elements holds as the kernels compute them: exact
    /// for the five formats of `attn_decode_chunk` (each widens to f32); an FP8 element is
    /// `scale · e` rounded once to f32.
    pub fn decode_row(self, bytes: &[u8], d: usize) -> Vec<f32> {
        let half = |i: usize| u16::from_le_bytes([bytes[i], bytes[i + 1]]);
        match self {
            KvFormat::F32 => (0..d).map(|i| f32::from_le_bytes([bytes[4 * i], bytes[4 * i + 1], bytes[4 * i + 2], bytes[4 * i + 3]])).collect(),
            KvFormat::F16 => (0..d).map(|i| f16_to_f32(half(2 * i))).collect(),
            KvFormat::Bf16 => (0..d).map(|i| bf16_to_f32(half(2 * i))).collect(),
            KvFormat::Q8_0 => (0..d)
                .map(|i| {
                    let o = i / 32 * 34;
                    f16_to_f32(half(o)) * bytes[o + 2 + i % 32] as i8 as f32
                })
                .collect(),
            KvFormat::Q4_0 => (0..d)
                .map(|i| {
                    let (o, j) = (i / 32 * 18, i % 32);
                    let byte = bytes[o + 2 + j % 16];
                    let n = if j < 16 { byte & 15 } else { byte >> 4 };
                    f16_to_f32(half(o)) * (n as f32 - 8.0)
                })
                .collect(),
            KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. } => self.decode_row_f64(bytes, d).into_iter().map(|v| v as f32).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_round_trip_within_the_format_step() {
        let x: Vec<f32> = (0..64).map(|i| ((i * 37 % 64) as f32 - 31.5) / 20.0).collect();
        for f in KvFormat::ALL {
            let bytes = f.encode_row(&x);
            assert_eq!(bytes.len(), f.row_bytes(64), "{f:?}");
            let y = f.decode_row(&bytes, 64);
            let amax = 31.5 / 20.0;
            let bound = match f {
                KvFormat::F32 => 0.0,
                KvFormat::F16 => amax / 1024.0,
                KvFormat::Bf16 => amax / 128.0,
                // Half a step, plus the f16 rounding of the scale over 127 steps.
                KvFormat::Q8_0 => amax / 127.0 * 0.6,
                // The most negative value clamps to nibble 15: up to one whole step.
                KvFormat::Q4_0 => amax / 8.0 * 1.01,
                KvFormat::Fp8E4m3 | KvFormat::Fp8Mixed { .. } => unreachable!("ALL holds the five block and float formats"),
            };
            for (a, b) in x.iter().zip(&y) {
                assert!((a - b).abs() <= bound, "{f:?}: {a} → {b} (bound {bound})");
            }
            assert_eq!(KvFormat::parse(f.name(), None), Some(f));
        }
        assert_eq!(KvFormat::parse("q5_1", None), None);
        assert_eq!(KvFormat::parse("fp8_mixed", None), None);
        assert_eq!(KvFormat::parse("fp8_mixed", Some(448)), Some(KvFormat::Fp8Mixed { fp8_dims: 448 }));
    }

    #[test]
    fn q4_0_nibble_order_is_ggml() {
        // Element j < 16 is the low nibble of byte j, j ≥ 16 the high nibble of byte j − 16.
        let mut bytes = f32_to_f16(1.0).to_le_bytes().to_vec();
        bytes.extend((0..16u8).map(|j| j | ((15 - j) << 4)));
        let y = KvFormat::Q4_0.decode_row(&bytes, 32);
        assert_eq!(y[0], -8.0);
        assert_eq!(y[15], 7.0);
        assert_eq!(y[16], 7.0);
        assert_eq!(y[31], -8.0);
    }

    #[test]
    fn fp8_rows_hold_the_scale_the_codes_and_the_bf16_tail() {
        // 8 dimensions: 4 E4M3 (amax 448 → scale 1), then 4 bf16.
        let x = [448.0, -1.0, 0.0625, -0.0, 1.5, -2.0, 3.0, 0.25];
        let f = KvFormat::Fp8Mixed { fp8_dims: 4 };
        let bytes = f.encode_row(&x);
        assert_eq!(bytes.len(), f.row_bytes(8));
        assert_eq!(&bytes[..4], &1.0f32.to_le_bytes());
        // 448 = 0.1111.110, −1 = 1.0111.000, 2⁻⁴ = 0.0011.000, −0 keeps its sign.
        assert_eq!(&bytes[4..8], &[0x7e, 0xb8, 0x18, 0x80]);
        assert_eq!(&bytes[8..10], &f32_to_bf16(1.5).to_le_bytes());
        assert_eq!(f.decode_row(&bytes, 8), x.to_vec());
        // Saturation, and the NaN code decodes to NaN.
        let mut sat = KvFormat::Fp8E4m3.encode_row(&[1.0, 0.0, 0.0, 0.0]);
        assert_eq!(sat[4], 0x7e);
        sat[5] = 0x7f;
        assert!(KvFormat::Fp8E4m3.decode_row_f64(&sat, 4)[1].is_nan());
        // An all-zero row has scale 0 and zero codes.
        assert_eq!(KvFormat::Fp8E4m3.encode_row(&[0.0; 4]), vec![0; 8]);
    }

    #[test]
    fn fp8_elements_are_exact_in_f64_and_rounded_once_in_f32() {
        // scale = 3/448 is not a short binary fraction: scale · e needs more than f32's bits.
        let x: Vec<f32> = (0..32).map(|i| (i as f32 - 15.5) * 0.1875).collect();
        let bytes = KvFormat::Fp8E4m3.encode_row(&x);
        let exact = KvFormat::Fp8E4m3.decode_row_f64(&bytes, 32);
        let single = KvFormat::Fp8E4m3.decode_row(&bytes, 32);
        for (e, s) in exact.iter().zip(&single) {
            assert_eq!(*s, *e as f32);
        }
        // Round trip within half an E4M3 step (3 mantissa bits) of the value.
        for (a, e) in x.iter().zip(&exact) {
            assert!((*a as f64 - e).abs() <= (*a as f64).abs() / 16.0 + 1e-9, "{a} → {e}");
        }
    }
}
