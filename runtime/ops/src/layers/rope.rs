//! `rope_f32` / `rope_bf16` calls and the cos/sin cache.

use super::{require, LayerError};
use crate::Device;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, HostBuffer};

/// Which dims form a rotated pair.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopePairing {
    /// `(i, i + n_rot/2)`: GPT-NeoX, Llama.
    NeoX,
    /// `(2i, 2i + 1)`: GPT-J.
    Interleaved,
}

/// The output's storage type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RopeOutput {
    /// f32.
    F32,
    /// bf16, rounded to nearest even from the f32 result.
    Bf16,
}

/// A `[max_pos][n_rot / 2]` cos and sin cache.
#[derive(Clone, Debug, PartialEq)]
pub struct RopeCache {
    /// Positions held.
    pub max_pos: u32,
    /// Rotated dims (even).
    pub n_rot: u32,
    /// `cos(pos · base^(−2i/n_rot))`.
    pub cos: Vec<f32>,
    /// `sin(pos · base^(−2i/n_rot))`.
    pub sin: Vec<f32>,
}

/// The cache for `max_pos` positions and `n_rot` rotated dims with frequency base
/// `base` (10000 in most models), each angle and its cos and sin computed in f64 and
/// rounded once to f32 — or, with `bf16`, rounded to bf16 (the negative control of a
/// low-precision cache; the values are then bf16 numbers held as f32).
pub fn rope_cache(max_pos: u32, n_rot: u32, base: f64, bf16: bool) -> RopeCache {
    let half = (n_rot / 2) as usize;
    let round = |v: f64| {
        let f = v as f32;
        if bf16 {
            onekernel_dsl::half::bf16_to_f32(onekernel_dsl::half::f32_to_bf16(f))
        } else {
            f
        }
    };
    let (mut cos, mut sin) = (Vec::with_capacity(max_pos as usize * half), Vec::with_capacity(max_pos as usize * half));
    for p in 0..max_pos as usize {
        for i in 0..half {
            let theta = p as f64 * base.powf(-2.0 * i as f64 / n_rot as f64);
            cos.push(round(theta.cos()));
            sin.push(round(theta.sin()));
        }
    }
    RopeCache { max_pos, n_rot, cos, sin }
}

/// One call's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct RopeInputs {
    /// `[n_tokens][n_heads][head_dim]`.
    pub x: Vec<f32>,
    /// Each token's position (`< cache.max_pos`).
    pub pos: Vec<u32>,
    /// Heads per token.
    pub n_heads: u32,
    /// Dims per head.
    pub head_dim: u32,
    /// First rotated dim (the rotated dims are `rot_offset .. rot_offset + cache.n_rot`).
    pub rot_offset: u32,
    /// Pairing.
    pub pairing: RopePairing,
    /// Rotate by −θ.
    pub inverse: bool,
}

impl Device<'_> {
    /// Rotates `x` by its tokens' positions (docs/LAYERS.md); returns
    /// `[n_tokens][n_heads][head_dim]` values of the `output` type (bf16 widened to f32).
    pub fn rope(&mut self, x: &RopeInputs, cache: &RopeCache, output: RopeOutput) -> Result<Vec<f32>, LayerError> {
        let k = match output {
            RopeOutput::F32 => "rope_f32",
            RopeOutput::Bf16 => "rope_bf16",
        };
        let (d, h, rot, off) = (x.head_dim, x.n_heads, cache.n_rot, x.rot_offset);
        require(k, "n_rot", rot >= 2 && rot.is_multiple_of(2), || format!("n_rot = {rot}: an even number of rotated dims ≥ 2"))?;
        require(k, "rot_offset", off as u64 + rot as u64 <= d as u64, || {
            format!("dims {off} … {} are past head_dim = {d}", off as u64 + rot as u64 - 1)
        })?;
        require(k, "n_heads", h >= 1, || "no heads".into())?;
        let half = (rot / 2) as usize;
        require(k, "cache", cache.cos.len() == cache.max_pos as usize * half && cache.sin.len() == cache.cos.len(), || {
            format!("cos holds {} and sin {} values, max_pos × n_rot/2 = {}", cache.cos.len(), cache.sin.len(), cache.max_pos as usize * half)
        })?;
        let per_token = h as usize * d as usize;
        require(k, "x", !x.x.is_empty() && x.x.len() == x.pos.len() * per_token, || {
            format!("{} values for {} positions of {h} heads × {d} dims", x.x.len(), x.pos.len())
        })?;
        if let Some((t, p)) = x.pos.iter().enumerate().find(|(_, &p)| p >= cache.max_pos) {
            return Err(LayerError::Invalid {
                kernel: k,
                argument: "pos",
                message: format!("pos[{t}] = {p}: the cache holds positions 0 … {}", cache.max_pos - 1),
            });
        }
        let n = x.pos.len() as u32;
        let elem = if output == RopeOutput::F32 { StorageType::F32 } else { StorageType::Bf16 };
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(&x.x))
            .buffer("pos", HostBuffer::from_u32(&x.pos))
            .buffer("cos", HostBuffer::from_f32(&cache.cos))
            .buffer("sin", HostBuffer::from_f32(&cache.sin))
            .buffer("y", HostBuffer::zeros(elem, x.x.len()))
            .scalar("n_tokens", n)
            .scalar("n_heads", h)
            .scalar("head_dim", d)
            .scalar("n_rot", rot)
            .scalar("rot_offset", off)
            .scalar("max_pos", cache.max_pos)
            .scalar("neox", (x.pairing == RopePairing::NeoX) as u32)
            .scalar("inverse", x.inverse as u32);
        self.launch_variant(k, &[], &mut args, [(h * d).div_ceil(128), n, 1])?;
        Ok(args.get_buffer("y").map(|b| b.to_f32()).unwrap_or_default())
    }
}
