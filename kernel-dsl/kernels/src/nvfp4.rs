//! NVFP4: blocks of 16 E2M1 values with an E4M3 block scale and an f32 global scale
//! (docs/NVFP4.md). Quantization with the global scale computed from the data (two
//! launches: block maxima of slices, then the quantization, which reduces them first),
//! dequantization, and a GEMV with NVFP4 weights.
//!
//! Roundings (E4M3, E2M1) are one integer rule on the f32 bits, round to nearest even
//! with saturation; `onekernel_ops::nvfp4::codec` is the same rule on the host.

use onekernel_macros::kernel;

/// `part[g]` = the largest |x| of slice g: workgroup g reads `x[g·per_group ..][..per_group]`
/// (the last slice shorter), `groups = [ceil(n / per_group), 1, 1]`. A maximum does not
/// depend on the order it is taken in.
#[kernel(workgroup = 256)]
pub fn nvfp4_amax(#[len(n)] x: &[f32], #[len(num_groups().x)] part: &mut [f32], #[push] n: u32, #[push] per_group: u32) {
    let g = group_id().x;
    let t = local_id().x;
    let start = g * per_group;
    let end = min(start + per_group, n);
    let mut m = 0.0;
    for i in (start + t..end).step_by(WORKGROUP_X) {
        m = max(m, x[i].abs());
    }
    let top = workgroup_max(m);
    if t == 0 {
        part[g] = top;
    }
}

/// Quantizes `x` (`n_blocks` blocks of 16, finite) to NVFP4, one block per invocation
/// (`groups = [ceil(n_blocks / 128), 1, 1]`): the global scale `global = amax / 2688`
/// (amax the largest of `part`, which `nvfp4_amax` wrote), then per block
/// `s = E4M3(bmax / (6 · global))`, `q_i = E2M1(x_i / (s · global))` (a block whose scale
/// code is 0 stores zeros), element 2k in the low nibble of byte k of the block's 8
/// bytes (`packed` as two little-endian words per block). Workgroup 0 stores `global`.
/// With `use_static` the global scale is `static_global` instead (a checkpoint's
/// calibrated activation scale: the negative control of a stale one) and `part` is not
/// read.
#[kernel(workgroup = 128)]
pub fn nvfp4_quantize(
    #[len(n_blocks * 16)] x: &[f32],
    #[len(n_parts)] part: &[f32],
    #[len(n_blocks * 2)] packed: &mut [u32],
    #[len(n_blocks)] scales: &mut [u8],
    #[len(1)] global: &mut [f32],
    #[push] n_blocks: u32,
    #[push] n_parts: u32,
    #[push] use_static: u32,
    #[push] static_global: f32,
) {
    let b = global_id().x;
    let mut g = static_global;
    if use_static == 0 {
        let mut amax = 0.0;
        for i in 0..n_parts {
            amax = max(amax, part[i]);
        }
        g = amax / 2688.0;
    }
    if b == 0 {
        global[0] = g;
    }
    if b < n_blocks {
        let mut bmax = 0.0;
        for i in 0..16u32 {
            bmax = max(bmax, x[b * 16 + i].abs());
        }
        let d = 6.0 * g;
        // E4M3 of bmax / d (positive): round to nearest even on the f32 bits, saturate
        // at 448 (code 0x7e); 0 where the global scale is 0.
        let mut s = 0u32;
        if d > 0.0 {
            let v = (bmax / d).to_bits();
            let ef = (v >> 23) as i32;
            let mut e = ef - 127;
            let mut full = (v & 0x7f_ffffu32) | 0x80_0000u32;
            if ef == 0 {
                e = -126;
                full = v & 0x7f_ffffu32;
            }
            let ee = max(e, -6);
            let shift = (20 + ee - e) as u32;
            let mut q = 0u32;
            if shift <= 24 {
                q = full >> shift;
                let rem = full & ((1u32 << shift) - 1);
                let half = 1u32 << (shift - 1);
                if rem > half || (rem == half && (q & 1) == 1) {
                    q = q + 1;
                }
            }
            s = min((((ee + 7) as u32) << 3) + q - 8, 0x7eu32);
        }
        scales[b] = s;
        // The scale's value: subnormal (e = 0) m·2⁻⁹, else (8 + m)·2^(e − 10).
        let se = s >> 3;
        let sm = (s & 7) as f32;
        let mut sv = sm * 0.001953125;
        if se > 0 {
            sv = (8.0 + sm) * f32::from_bits((se + 117) << 23);
        }
        let t = sv * g;
        let mut lo = 0u32;
        let mut hi = 0u32;
        for i in 0..16u32 {
            let xv = x[b * 16 + i];
            let mut code = 0u32;
            if s != 0 {
                let v = (xv / t).to_bits();
                let ef = ((v >> 23) & 0xff) as i32;
                let mut e = ef - 127;
                let mut full = (v & 0x7f_ffffu32) | 0x80_0000u32;
                if ef == 0 {
                    e = -126;
                    full = v & 0x7f_ffffu32;
                }
                let ee = max(e, 0);
                let shift = (22 + ee - e) as u32;
                let mut q = 0u32;
                if shift <= 24 {
                    q = full >> shift;
                    let rem = full & ((1u32 << shift) - 1);
                    let half = 1u32 << (shift - 1);
                    if rem > half || (rem == half && (q & 1) == 1) {
                        q = q + 1;
                    }
                }
                // A code carries a sign only with a magnitude: what rounds to zero is +0.
                code = min((((ee + 1) as u32) << 1) + q - 2, 7u32);
                if code != 0 {
                    code = code | ((v >> 28) & 8);
                }
            }
            if i < 8 {
                lo = lo | (code << (4 * i));
            } else {
                hi = hi | (code << (4 * (i - 8)));
            }
        }
        packed[2 * b] = lo;
        packed[2 * b + 1] = hi;
    }
}

/// The values of an NVFP4 tensor: `y_i = E2M1(q_i) · (E4M3(s) · global)`, one element
/// per invocation (`groups = [ceil(16 · n_blocks / 256), 1, 1]`).
#[kernel(workgroup = 256)]
pub fn nvfp4_dequantize(
    #[len(n_blocks * 2)] packed: &[u32],
    #[len(n_blocks)] scales: &[u8],
    #[len(n_blocks * 16)] y: &mut [f32],
    #[push] n_blocks: u32,
    #[push] global: f32,
) {
    let i = global_id().x;
    if i < n_blocks * 16 {
        let b = i / 16;
        let s = scales[b] as u32;
        let se = s >> 3;
        let sm = (s & 7) as f32;
        let mut sv = sm * 0.001953125;
        if se > 0 {
            sv = (8.0 + sm) * f32::from_bits((se + 117) << 23);
        }
        let code = (packed[i / 8] >> (4 * (i % 8))) & 15;
        let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
        let mut q = table[code & 7];
        if code >= 8 {
            q = -q;
        }
        y[i] = q * (sv * global);
    }
}

/// `y = W · x` with NVFP4 weights `W` (`[n_rows][n_cols]`: `w_packed` two words per
/// block, `w_scales`, global scale `w_global`) and f32 or bf16 activations, one
/// workgroup per output row (`groups = [n_rows, 1, 1]`). Invocation t takes the row's
/// blocks t, t + 128, … in order; a block's sum is `Σ_i E2M1(q_i) · x_i` from i = 0,
/// multiplied by `E4M3(s) · w_global` and added to the invocation's total;
/// `workgroup_sum` (the fixed tree) adds the totals.
#[kernel(workgroup = 128, variants(T = [f32, bf16]))]
pub fn nvfp4_gemv(
    #[len(n_rows * (n_cols / 8))] w_packed: &[u32],
    #[len(n_rows * (n_cols / 16))] w_scales: &[u8],
    #[len(n_cols)] x: &[T],
    #[len(n_rows)] y: &mut [f32],
    #[push] n_rows: u32,
    #[push] n_cols: u32,
    #[push] w_global: f32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let blocks = n_cols / 16;
    let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let mut total = 0.0;
    for b in (t..blocks).step_by(WORKGROUP_X) {
        let at = row * blocks + b;
        let s = w_scales[at] as u32;
        let se = s >> 3;
        let sm = (s & 7) as f32;
        let mut sv = sm * 0.001953125;
        if se > 0 {
            sv = (8.0 + sm) * f32::from_bits((se + 117) << 23);
        }
        let mut sum = 0.0;
        for i in 0..16u32 {
            let code = (w_packed[2 * at + i / 8] >> (4 * (i % 8))) & 15;
            let mut q = table[code & 7];
            if code >= 8 {
                q = -q;
            }
            sum += q * x[b * 16 + i];
        }
        total += sum * (sv * w_global);
    }
    let dot = workgroup_sum(total);
    if t == 0 {
        y[row] = dot;
    }
}

/// `y = W · x` with NVFP4 weights and NVFP4 activations (`x_packed`, `x_scales` and the
/// global scale `x_global[0]` that `nvfp4_quantize` wrote): as `nvfp4_gemv`, a block's
/// sum `Σ_i E2M1(w_i) · E2M1(x_i)` (exact: multiples of 1/4 below 2¹⁰) multiplied by
/// `(E4M3(s_w) · w_global) · (E4M3(s_x) · x_global)`.
#[kernel(workgroup = 128)]
pub fn nvfp4_gemv_nvfp4(
    #[len(n_rows * (n_cols / 8))] w_packed: &[u32],
    #[len(n_rows * (n_cols / 16))] w_scales: &[u8],
    #[len(n_cols / 8)] x_packed: &[u32],
    #[len(n_cols / 16)] x_scales: &[u8],
    #[len(1)] x_global: &[f32],
    #[len(n_rows)] y: &mut [f32],
    #[push] n_rows: u32,
    #[push] n_cols: u32,
    #[push] w_global: f32,
) {
    let row = group_id().x;
    let t = local_id().x;
    let blocks = n_cols / 16;
    let table = [0.0f32, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0];
    let xg = x_global[0];
    let mut total = 0.0;
    for b in (t..blocks).step_by(WORKGROUP_X) {
        let at = row * blocks + b;
        let sw = w_scales[at] as u32;
        let mut swv = (sw & 7) as f32 * 0.001953125;
        if sw >> 3 > 0 {
            swv = (8.0 + (sw & 7) as f32) * f32::from_bits(((sw >> 3) + 117) << 23);
        }
        let sx = x_scales[b] as u32;
        let mut sxv = (sx & 7) as f32 * 0.001953125;
        if sx >> 3 > 0 {
            sxv = (8.0 + (sx & 7) as f32) * f32::from_bits(((sx >> 3) + 117) << 23);
        }
        let mut sum = 0.0;
        for i in 0..16u32 {
            let cw = (w_packed[2 * at + i / 8] >> (4 * (i % 8))) & 15;
            let cx = (x_packed[2 * b + i / 8] >> (4 * (i % 8))) & 15;
            let mut qw = table[cw & 7];
            if cw >= 8 {
                qw = -qw;
            }
            let mut qx = table[cx & 7];
            if cx >= 8 {
                qx = -qx;
            }
            sum += qw * qx;
        }
        total += sum * ((swv * w_global) * (sxv * xg));
    }
    let dot = workgroup_sum(total);
    if t == 0 {
        y[row] = dot;
    }
}
