//! NVFP4 as calls (docs/NVFP4.md): quantization with the global scale computed from the
//! data by the kernels (or a static one, the negative control), dequantization, and
//! GEMV with NVFP4 weights and f32, bf16 or NVFP4 activations. [`codec`] is the same
//! arithmetic on the host, bit for bit.

pub mod codec;

pub use codec::Nvfp4;

use crate::call::require;
use crate::{CallError, Device};
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, HostBuffer};

/// Values each workgroup of the maximum pass reads.
const AMAX_SLICE: u32 = 16384;

/// Where the quantization's global scale comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum GlobalScale {
    /// `amax / (6 · 448)` of the data, computed by the kernels.
    FromData,
    /// A given scale (a checkpoint's static activation scale).
    Static(f32),
}

/// A GEMV's activations.
#[derive(Clone, Copy, Debug)]
pub enum Activation<'a> {
    /// f32 values.
    F32(&'a [f32]),
    /// Values stored as bf16 (rounded to nearest even on upload).
    Bf16(&'a [f32]),
    /// An NVFP4 vector (one row).
    Nvfp4(&'a Nvfp4),
}

fn packed_words(t: &Nvfp4) -> HostBuffer {
    HostBuffer::u32_image(&t.packed)
}

/// A u8 buffer of `v`.
fn bytes(v: &[u8]) -> HostBuffer {
    let mut b = HostBuffer::zeros(StorageType::U8, v.len());
    b.as_bytes_mut().copy_from_slice(v);
    b
}

impl Device<'_> {
    /// Quantizes `x` (`[rows][cols]`, cols a multiple of 16, finite) to NVFP4.
    pub fn nvfp4_quantize(&mut self, x: &[f32], rows: usize, cols: usize, scale: GlobalScale) -> Result<Nvfp4, CallError> {
        const K: &str = "nvfp4_quantize";
        require(K, "cols", cols > 0 && cols.is_multiple_of(16), || format!("{cols} columns: a multiple of 16 (the block)"))?;
        require(K, "x", x.len() == rows * cols && rows > 0, || format!("{} values for {rows} × {cols}", x.len()))?;
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(CallError::Invalid { kernel: K, argument: "x", message: format!("x[{i}] = {} is not finite", x[i]) });
        }
        if let GlobalScale::Static(g) = scale {
            require(K, "scale", g.is_finite() && g > 0.0, || format!("static scale {g}: positive and finite"))?;
        }
        let n = x.len() as u32;
        let n_blocks = n / 16;
        let parts = n.div_ceil(AMAX_SLICE);
        // The first launch, only for a scale from the data: each slice's largest |x|.
        let part = match scale {
            GlobalScale::FromData => {
                let mut amax = Args::new()
                    .buffer("x", HostBuffer::from_f32(x))
                    .buffer("part", HostBuffer::zeros(StorageType::F32, parts as usize))
                    .scalar("n", n)
                    .scalar("per_group", AMAX_SLICE);
                self.launch_variant("nvfp4_amax", &[], &mut amax, [parts, 1, 1])?;
                amax.get_buffer("part").map(|b| b.to_f32()).unwrap_or_default()
            }
            GlobalScale::Static(_) => vec![0.0; parts as usize],
        };
        let (use_static, static_global) = match scale {
            GlobalScale::FromData => (0u32, 0.0f32),
            GlobalScale::Static(g) => (1, g),
        };
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(x))
            .buffer("part", HostBuffer::from_f32(&part))
            .buffer("packed", HostBuffer::zeros(StorageType::U32, 2 * n_blocks as usize))
            .buffer("scales", HostBuffer::zeros(StorageType::U8, n_blocks as usize))
            .buffer("global", HostBuffer::zeros(StorageType::F32, 1))
            .scalar("n_blocks", n_blocks)
            .scalar("n_parts", parts)
            .scalar("use_static", use_static)
            .scalar("static_global", static_global);
        self.launch_variant(K, &[], &mut args, [n_blocks.div_ceil(128), 1, 1])?;
        let bytes = |name: &str| args.get_buffer(name).map(|b| b.as_bytes().to_vec()).unwrap_or_default();
        let global = args.get_buffer("global").map(|b| b.to_f32()[0]).unwrap_or(0.0);
        Ok(Nvfp4 { rows, cols, packed: bytes("packed"), scales: bytes("scales"), global })
    }

    /// The values of `t`.
    pub fn nvfp4_dequantize(&mut self, t: &Nvfp4) -> Result<Vec<f32>, CallError> {
        let n_blocks = (t.rows * t.cols / 16) as u32;
        check_tensor("nvfp4_dequantize", "t", t)?;
        let mut args = Args::new()
            .buffer("packed", packed_words(t))
            .buffer("scales", bytes(&t.scales))
            .buffer("y", HostBuffer::zeros(StorageType::F32, t.rows * t.cols))
            .scalar("n_blocks", n_blocks)
            .scalar("global", t.global);
        self.launch_variant("nvfp4_dequantize", &[], &mut args, [(16 * n_blocks).div_ceil(256), 1, 1])?;
        Ok(args.get_buffer("y").map(|b| b.to_f32()).unwrap_or_default())
    }

    /// `y = W · x` for NVFP4 weights `w` (`[rows][cols]`).
    pub fn nvfp4_gemv(&mut self, w: &Nvfp4, x: Activation) -> Result<Vec<f32>, CallError> {
        check_tensor("nvfp4_gemv", "w", w)?;
        let (rows, cols) = (w.rows as u32, w.cols as u32);
        let base = |x: HostBuffer| {
            Args::new()
                .buffer("w_packed", packed_words(w))
                .buffer("w_scales", bytes(&w.scales))
                .buffer("x", x)
                .buffer("y", HostBuffer::zeros(StorageType::F32, w.rows))
                .scalar("n_rows", rows)
                .scalar("n_cols", cols)
                .scalar("w_global", w.global)
        };
        let (kernel, mut args) = match x {
            Activation::F32(v) | Activation::Bf16(v) => {
                let k = if matches!(x, Activation::F32(_)) { "nvfp4_gemv_f32" } else { "nvfp4_gemv_bf16" };
                require(k, "x", v.len() == w.cols, || format!("{} values for {} columns", v.len(), w.cols))?;
                let buf = if k == "nvfp4_gemv_f32" { HostBuffer::from_f32(v) } else { HostBuffer::bf16_from_f32(v) };
                (k, base(buf))
            }
            Activation::Nvfp4(q) => {
                const K: &str = "nvfp4_gemv_nvfp4";
                check_tensor(K, "x", q)?;
                require(K, "x", q.rows == 1 && q.cols == w.cols, || format!("{} × {} for a vector of {} columns", q.rows, q.cols, w.cols))?;
                let a = Args::new()
                    .buffer("w_packed", packed_words(w))
                    .buffer("w_scales", bytes(&w.scales))
                    .buffer("x_packed", packed_words(q))
                    .buffer("x_scales", bytes(&q.scales))
                    .buffer("x_global", HostBuffer::from_f32(&[q.global]))
                    .buffer("y", HostBuffer::zeros(StorageType::F32, w.rows))
                    .scalar("n_rows", rows)
                    .scalar("n_cols", cols)
                    .scalar("w_global", w.global);
                (K, a)
            }
        };
        self.launch_variant(kernel, &[], &mut args, [rows, 1, 1])?;
        Ok(args.get_buffer("y").map(|b| b.to_f32()).unwrap_or_default())
    }
}

/// An NVFP4 tensor whose byte counts match its shape.
fn check_tensor(kernel: &'static str, argument: &'static str, t: &Nvfp4) -> Result<(), CallError> {
    let n = t.rows * t.cols;
    require(kernel, argument, n > 0 && t.cols.is_multiple_of(16), || format!("{} × {}: columns a multiple of 16", t.rows, t.cols))?;
    require(kernel, argument, t.packed.len() == n / 2 && t.scales.len() == n / 16, || {
        format!("{} packed bytes and {} scales for {} × {} (want {} and {})", t.packed.len(), t.scales.len(), t.rows, t.cols, n / 2, n / 16)
    })
}
