//! KV-cache element formats of decode attention and their byte images: what the
//! `k_type` / `v_type` push constants of `attn_decode_chunk` select, how a `[D]` row is
//! stored, and the exact values a stored row holds.

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
}

impl KvFormat {
    /// Every format, in push-constant order.
    pub const ALL: [KvFormat; 5] = [KvFormat::F32, KvFormat::F16, KvFormat::Bf16, KvFormat::Q8_0, KvFormat::Q4_0];

    /// The value of the kernel's `k_type` / `v_type` push constant.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// The fixture schema's name (`f32`, `q8_0` …).
    pub fn name(self) -> &'static str {
        match self {
            KvFormat::F32 => "f32",
            KvFormat::F16 => "f16",
            KvFormat::Bf16 => "bf16",
            KvFormat::Q8_0 => "q8_0",
            KvFormat::Q4_0 => "q4_0",
        }
    }

    /// The format of a schema name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
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
        }
        out
    }

    /// The values a stored row of `d` elements holds (exact: every format widens to f32).
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
            };
            for (a, b) in x.iter().zip(&y) {
                assert!((a - b).abs() <= bound, "{f:?}: {a} → {b} (bound {bound})");
            }
            assert_eq!(KvFormat::parse(f.name()), Some(f));
        }
        assert_eq!(KvFormat::parse("q5_1"), None);
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
}
