//! Validation cases of the catalogue's kernels: shapes that cover full and partial
//! workgroups, rows shorter than a workgroup, and several rows.

use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::types::Literal;

fn rms_norm(rows: u32, cols: u32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -3.0, hi: 3.0 })
        .buffer("w", cols as usize, Fill::Uniform { lo: 0.5, hi: 1.5 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("eps", Literal::f32(1e-6))
}

fn softmax(rows: u32, cols: u32, scale: f32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}, scale {scale}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -8.0, hi: 8.0 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("scale", Literal::f32(scale))
}

/// The validation cases of a catalogue kernel, by name; `None` for a kernel without
/// cases (the validator reports that as an error, never as a pass).
pub fn validation_cases(kernel: &str) -> Option<Vec<Case>> {
    Some(match kernel {
        "rms_norm_f32" | "rms_norm_f16" => vec![rms_norm(1, 100), rms_norm(4, 1000), rms_norm(3, 4096)],
        "softmax_rows" => vec![softmax(1, 5, 1.0), softmax(4, 1000, 0.125), softmax(2, 4096, 2.0)],
        _ => return None,
    })
}
