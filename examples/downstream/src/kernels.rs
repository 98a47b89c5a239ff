//! This crate's kernels, written in the onekernel DSL. The file is compiled twice: by
//! `build.rs` (`#[path]`), which generates every backend from it, and as this library's
//! `kernels` module, whose functions give the interpreter the same IR to validate the
//! generated artifacts against (`tests/validate.rs`).

use onekernel_macros::kernel;

/// Scales the first `n` elements of `x` in place: `x[i] = factor · x[i]`.
#[kernel(workgroup = 128)]
pub fn scale_in_place(#[len(n)] x: &mut [f32], #[push] factor: f32, #[push] n: u32) {
    let i = global_id().x;
    if i < n {
        x[i] = x[i] * factor;
    }
}

/// Adds a per-column bias to each row of `x` (`n_cols` columns) in place, for f32 and
/// f16 data: a type axis, so this function returns two kernels, `add_bias_f32` and
/// `add_bias_f16` (give them to `Builder::kernels`).
#[kernel(workgroup = 256, variants(T = [f32, f16]))]
pub fn add_bias(#[len(num_groups().y * n_cols)] x: &mut [T], #[len(n_cols)] bias: &[f32], #[push] n_cols: u32) {
    let c = global_id().x;
    if c < n_cols {
        let at = group_id().y * n_cols + c;
        x[at] = x[at] + bias[c];
    }
}
