//! Host encoders and float64 decoders of the elizaOS KV-cache formats, written from
//! FORMATS.md (§0–5): what fills a cache on the host (and the trellis encoder of
//! turbo3_tcq, which has no GPU form), and the reference the kernels are checked
//! against for layouts without published fixtures. Rows are 128 elements.

use super::constants as C;
use onekernel_dsl::half::{f16_to_f32, f32_to_f16};

/// Elements per row.
pub const D: usize = 128;

/// Bytes of one row in each format.
pub mod bytes {
    /// Legacy `block_turbo3_0` × 4.
    pub const TURBO3: usize = 56;
    /// `block_tbq3_0` × 4.
    pub const TBQ3: usize = 56;
    /// Legacy `block_turbo4_0`.
    pub const TURBO4_LEGACY: usize = 66;
    /// `block_tbq4_0` × 4.
    pub const TBQ4: usize = 72;
    /// `turbo3_tcq`.
    pub const TCQ: usize = 52;
    /// `block_qjl1_256`.
    pub const QJL: usize = 34;
    /// `block_q4_polar`.
    pub const POLAR: usize = 82;
}

/// √(π/2) / 256, the QJL score scale.
pub const QJL_SCALE: f64 = 1.2533141373155003 / 256.0;

/// In-place unnormalised Walsh–Hadamard butterfly (Sylvester order).
pub fn fwht(v: &mut [f64]) {
    let n = v.len();
    let mut h = 1;
    while h < n {
        for blk in (0..n).step_by(2 * h) {
            for j in blk..blk + h {
                let (a, b) = (v[j], v[j + h]);
                v[j] = a + b;
                v[j + h] = a - b;
            }
        }
        h *= 2;
    }
}

/// The turbo rotation `R(x) = signs2 ⊙ FWHT128n(signs1 ⊙ x)`.
pub fn rotate(x: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = x.iter().zip(C::WHT_SIGNS1).map(|(a, s)| a * s as f64).collect();
    fwht(&mut v);
    v.iter().zip(C::WHT_SIGNS2).map(|(a, s)| a * s as f64 / (D as f64).sqrt()).collect()
}

/// TBQ preconditioning of 32 elements: `H32n(x ⊙ s)`.
pub fn precond(x: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = x.iter().zip(C::TBQ_SIGNS).map(|(a, s)| a * s as f64).collect();
    fwht(&mut v);
    v.iter().map(|a| a / 32f64.sqrt()).collect()
}

/// Its inverse: `s ⊙ H32n(y)`.
pub fn uncond(y: &[f64]) -> Vec<f64> {
    let mut v = y.to_vec();
    fwht(&mut v);
    v.iter().zip(C::TBQ_SIGNS).map(|(a, s)| a / 32f64.sqrt() * s as f64).collect()
}

fn norm(x: &[f32]) -> f32 {
    x.iter().map(|v| v * v).sum::<f32>().sqrt()
}

fn f16(b: &[u8], o: usize) -> f64 {
    f16_to_f32(u16::from_le_bytes([b[o], b[o + 1]])) as f64
}

/// First index i with `v < thresholds[i]`, else `thresholds.len()`.
fn bucket(v: f64, thresholds: &[f32]) -> usize {
    thresholds.iter().position(|&t| v < t as f64).unwrap_or(thresholds.len())
}

/// Nearest codebook entry, ties to the lower index.
fn nearest(v: f64, codebook: &[f32]) -> usize {
    let mut best = 0;
    for (i, &c) in codebook.iter().enumerate() {
        if (v - c as f64).abs() < (v - codebook[best] as f64).abs() {
            best = i;
        }
    }
    best
}

/// `g / ‖levels[codes]‖` (g when the root is ≤ 1e-10): the norm correction.
fn corrected(g: f32, codes: &[usize], levels: &[f32]) -> f32 {
    let r = codes.iter().map(|&c| (levels[c] as f64).powi(2)).sum::<f64>().sqrt() as f32;
    if r > 1e-10 {
        g / r
    } else {
        g
    }
}

/// Unit-norm rotated row and its norm g (zeros when g ≤ 1e-10).
fn unit_rotated(x: &[f32]) -> (f32, Vec<f64>) {
    let g = norm(x);
    let u: Vec<f64> = x.iter().map(|&v| if g > 1e-10 { (v / g) as f64 } else { 0.0 }).collect();
    (g, rotate(&u))
}

/// Legacy `block_turbo3_0` × 4 (§1a).
pub fn encode_turbo3(x: &[f32]) -> Vec<u8> {
    let (g, u) = unit_rotated(x);
    let codes: Vec<usize> = u.iter().map(|&v| bucket(v, &C::TURBO3_MIDPOINTS)).collect();
    let n = f32_to_f16(corrected(g, &codes, &C::TURBO3_CENTROIDS)).to_le_bytes();
    let mut out = Vec::with_capacity(bytes::TURBO3);
    for b in 0..4 {
        let c = &codes[32 * b..32 * b + 32];
        out.extend(n);
        out.extend((0..8).map(|i| (0..4).fold(0u8, |a, j| a | (((c[4 * i + j] & 3) as u8) << (2 * j)))));
        out.extend((0..4).map(|i| (0..8).fold(0u8, |a, j| a | (((c[8 * i + j] >> 2) as u8) << j))));
    }
    out
}

/// Rotated-domain values of a legacy turbo3 row.
pub fn decode_turbo3(b: &[u8]) -> Vec<f64> {
    (0..D)
        .map(|i| {
            let (blk, j) = (i / 32 * 14, i % 32);
            let low = (b[blk + 2 + j / 4] >> (2 * (j % 4))) & 3;
            let high = (b[blk + 10 + j / 8] >> (j % 8)) & 1;
            C::TURBO3_CENTROIDS[(low | (high << 2)) as usize] as f64 * f16(b, blk)
        })
        .collect()
}

fn tbq_blocks(x: &[f32], quant: impl Fn(f64) -> usize, pack: impl Fn(&[usize]) -> Vec<u8>) -> Vec<u8> {
    let mut out = Vec::new();
    for blk in x.chunks(32) {
        let y = precond(&blk.iter().map(|&v| v as f64).collect::<Vec<_>>());
        let d = (y.iter().map(|v| (*v as f32) * (*v as f32)).sum::<f32>() / 32.0).sqrt();
        let codes: Vec<usize> = if d == 0.0 { vec![0; 32] } else { y.iter().map(|&v| quant(v / d as f64)).collect() };
        out.extend(f32_to_f16(d).to_le_bytes());
        out.extend(pack(&codes));
    }
    out
}

/// `block_tbq3_0` × 4 (§1b).
pub fn encode_tbq3(x: &[f32]) -> Vec<u8> {
    tbq_blocks(
        x,
        |v| nearest(v, &C::TBQ3_CODEBOOK),
        |c| {
            let stream = c.iter().enumerate().fold(0u128, |s, (i, &code)| s | ((code as u128) << (3 * i)));
            stream.to_le_bytes()[..12].to_vec()
        },
    )
}

/// `block_tbq4_0` × 4 (§2a), with the eliza reference's thresholds.
pub fn encode_tbq4(x: &[f32]) -> Vec<u8> {
    tbq_blocks(x, |v| bucket(v, &C::TBQ4_MIDPOINTS), |c| (0..16).map(|j| c[j] as u8 | ((c[j + 16] as u8) << 4)).collect())
}

/// The preconditioned-domain values `r = d·codebook[code]` of a TBQ row (3 or 4 bits).
pub fn decode_tbq(b: &[u8], bits: u32) -> Vec<f64> {
    let block = if bits == 3 { 14 } else { 18 };
    (0..D)
        .map(|i| {
            let (o, j) = (i / 32 * block, i % 32);
            let d = f16(b, o);
            if bits == 3 {
                let stream = u128::from_le_bytes(std::array::from_fn(|k| if k < 12 { b[o + 2 + k] } else { 0 }));
                C::TBQ3_CODEBOOK[((stream >> (3 * j)) & 7) as usize] as f64 * d
            } else {
                let v = b[o + 2 + j % 16];
                C::TBQ4_CODEBOOK[(if j < 16 { v & 15 } else { v >> 4 }) as usize] as f64 * d
            }
        })
        .collect()
}

/// Real-domain values of a TBQ row: `uncond` of each 32-element block.
pub fn decode_tbq_real(b: &[u8], bits: u32) -> Vec<f64> {
    decode_tbq(b, bits).chunks(32).flat_map(uncond).collect()
}

/// Legacy 66-byte `block_turbo4_0` (§2b).
pub fn encode_turbo4_legacy(x: &[f32]) -> Vec<u8> {
    let (g, u) = unit_rotated(x);
    let codes: Vec<usize> = u.iter().map(|&v| bucket(v, &C::TURBO4_LEGACY_MIDPOINTS)).collect();
    let mut out = f32_to_f16(corrected(g, &codes, &C::TURBO4_LEGACY_LEVELS)).to_le_bytes().to_vec();
    out.extend((0..64).map(|i| codes[2 * i] as u8 | ((codes[2 * i + 1] as u8) << 4)));
    out
}

/// Rotated-domain values of a legacy turbo4 row.
pub fn decode_turbo4_legacy(b: &[u8]) -> Vec<f64> {
    (0..D).map(|j| C::TURBO4_LEGACY_LEVELS[((b[2 + j / 2] >> (4 * (j % 2))) & 15) as usize] as f64 * f16(b, 0)).collect()
}

/// turbo3_tcq (§3): Viterbi over the 512-state trellis on the host.
pub fn encode_tcq(x: &[f32]) -> Vec<u8> {
    let (g, u) = unit_rotated(x);
    let cb = &C::TCQ_CODEBOOK;
    let mut cost = vec![0.0f64; 512];
    let mut back = vec![[0u8; 64]; D];
    for t in 0..D {
        let mut best = [0.0f64; 64];
        for low in 0..64 {
            let mut p_best = 0;
            for p in 1..8 {
                if cost[(low << 3) | p] < cost[(low << 3) | p_best] {
                    p_best = p;
                }
            }
            best[low] = cost[(low << 3) | p_best];
            back[t][low] = p_best as u8;
        }
        for (s, c) in cost.iter_mut().enumerate() {
            let e = u[t] - cb[s] as f64;
            *c = best[s & 63] + e * e;
        }
    }
    let mut state = (0..512).fold(0, |b, s| if cost[s] < cost[b] { s } else { b });
    let mut syms = [0u8; D];
    for t in (0..D).rev() {
        syms[t] = ((state >> 6) & 7) as u8;
        state = ((state & 63) << 3) | back[t][state & 63] as usize;
    }
    let initial = state;
    // The stream: 6 prefix bits, then one 3-bit symbol per step.
    let mut stream = [0u8; 49];
    let mut put = |bit: usize, v: usize, n: usize| {
        for k in 0..n {
            if (v >> k) & 1 == 1 {
                stream[(bit + k) / 8] |= 1 << ((bit + k) % 8);
            }
        }
    };
    put(0, (initial >> 3) & 63, 6);
    for (t, &s) in syms.iter().enumerate() {
        put(6 + 3 * t, s as usize, 3);
    }
    let mut out = vec![0u8; bytes::TCQ];
    out[2..51].copy_from_slice(&stream);
    let states: Vec<usize> = (0..D).map(|t| tcq_state(&out, t)).collect();
    out[..2].copy_from_slice(&f32_to_f16(corrected(g, &states, cb)).to_le_bytes());
    out
}

fn tcq_state(b: &[u8], t: usize) -> usize {
    let o = 2 + 3 * t / 8;
    ((b[o] as usize | (b[o + 1] as usize) << 8) >> (3 * t % 8)) & 511
}

/// Rotated-domain values of a turbo3_tcq row.
pub fn decode_tcq(b: &[u8]) -> Vec<f64> {
    (0..D).map(|t| C::TCQ_CODEBOOK[tcq_state(b, t)] as f64 * f16(b, 0)).collect()
}

/// The QJL projection of the verify harness (§4, generator 1): splitmix64 from `seed`
/// (0 → 0x42), Marsaglia polar in f32, pairs emitted in order: 128 × 256 values.
pub fn qjl_projection(seed: u64) -> Vec<f32> {
    let mut state = if seed == 0 { 0x42 } else { seed };
    let mut draw = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        let out = z ^ (z >> 31);
        ((out >> 11) & 0xff_ffff) as f32 / 16_777_216.0 * 2.0 - 1.0
    };
    let mut prj = Vec::with_capacity(D * 256);
    while prj.len() < D * 256 {
        let (u, v) = (draw(), draw());
        let s = u * u + v * v;
        if s >= 1.0 || s == 0.0 {
            continue;
        }
        let f = (-2.0 * s.ln() / s).sqrt();
        prj.push(u * f);
        prj.push(v * f);
    }
    prj
}

/// `block_qjl1_256` of one key (§4): signs of Π·k and bf16(‖k‖) (fp32 norm).
pub fn encode_qjl(k: &[f32], prj: &[f32]) -> Vec<u8> {
    let mut out = vec![0u8; bytes::QJL];
    for j in 0..256 {
        let sketch: f32 = (0..D).map(|i| k[i] * prj[i * 256 + j]).sum();
        if sketch > 0.0 {
            out[j / 8] |= 1 << (j % 8);
        }
    }
    let u = norm(k).to_bits();
    let bf = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16;
    out[32..].copy_from_slice(&bf.to_le_bytes());
    out
}

fn qjl_norm(b: &[u8]) -> f64 {
    f32::from_bits((u16::from_le_bytes([b[32], b[33]]) as u32) << 16) as f64
}

fn sign(b: &[u8], j: usize) -> f64 {
    if (b[j / 8] >> (j % 8)) & 1 == 1 {
        1.0
    } else {
        -1.0
    }
}

/// QJL score against a pre-projected query sketch.
pub fn qjl_score(b: &[u8], q_sketch: &[f32]) -> f64 {
    QJL_SCALE * qjl_norm(b) * (0..256).map(|j| sign(b, j) * q_sketch[j] as f64).sum::<f64>()
}

/// Dequantized QJL key.
pub fn decode_qjl(b: &[u8], prj: &[f32]) -> Vec<f64> {
    (0..D).map(|i| QJL_SCALE * qjl_norm(b) * (0..256).map(|j| sign(b, j) * prj[i * 256 + j] as f64).sum::<f64>()).collect()
}

/// `block_q4_polar` (§5), with or without the 1-bit residual.
pub fn encode_polar(x: &[f32], use_qjl: bool) -> Vec<u8> {
    let l2 = x.iter().map(|&v| v as f64 * v as f64).sum::<f64>().sqrt() as f32;
    let mut u: Vec<f64> = x.iter().map(|&v| if l2 > 1e-10 { (v / l2) as f64 } else { 0.0 }).collect();
    fwht(&mut u);
    let idx: Vec<usize> = u.iter().map(|&v| bucket(v, &C::POLAR_BOUNDARIES)).collect();
    let mut out = f32_to_f16(l2).to_le_bytes().to_vec();
    out.extend((0..64).map(|i| idx[2 * i] as u8 | ((idx[2 * i + 1] as u8) << 4)));
    let mut qjl = [0u8; 16];
    if use_qjl {
        let rho: f64 = (0..D).map(|i| (u[i] - C::POLAR_CENTROIDS[idx[i]] as f64) * C::POLAR_PSI[i] as f64).sum();
        qjl[0] = (rho > 0.0) as u8;
    }
    out.extend(qjl);
    out
}

/// The five decode steps of a Polar row.
pub fn decode_polar(b: &[u8], use_qjl: bool) -> Vec<f64> {
    let sigma = if b[66] & 1 == 1 { 1.0 } else { -1.0 };
    let mut c: Vec<f64> = (0..D)
        .map(|i| {
            let v = C::POLAR_CENTROIDS[((b[2 + i / 2] >> (4 * (i % 2))) & 15) as usize] as f64;
            if use_qjl {
                v + sigma * (0.5 / (D as f64).sqrt()) * C::POLAR_PSI[i] as f64
            } else {
                v
            }
        })
        .collect();
    fwht(&mut c);
    c.iter().map(|v| v / 128.0 * f16(b, 0)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn psi_is_the_xorshift32_sequence() {
        let mut s: u32 = 42;
        for (i, &p) in C::POLAR_PSI.iter().enumerate() {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            assert_eq!(p, if s & 1 == 1 { 1.0 } else { -1.0 }, "ψ[{i}]");
        }
    }

    #[test]
    fn rotations_are_orthonormal() {
        let x: Vec<f64> = (0..128).map(|i| ((i * 7 % 13) as f64 - 6.0) / 5.0).collect();
        let n = |v: &[f64]| v.iter().map(|a| a * a).sum::<f64>();
        assert!((n(&rotate(&x)) - n(&x)).abs() < 1e-9);
        let y = precond(&x[..32]);
        let back = uncond(&y);
        assert!(back.iter().zip(&x[..32]).all(|(a, b)| (a - b).abs() < 1e-12));
    }
}
