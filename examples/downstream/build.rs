//! Defines a kernel in the DSL and generates every backend for it at build time,
//! through the code generator's library API (no shell-out).

use onekernel_macros::kernel;

/// Scales the first `n` elements of `x` in place: `x[i] = factor · x[i]`.
#[kernel(workgroup = 128)]
fn scale_in_place(x: &mut [f32], #[push] factor: f32, #[push] n: u32) {
    let i = global_id().x;
    if i < n {
        x[i] = x[i] * factor;
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::var("OUT_DIR")?;
    onekernel_codegen::Builder::new().kernel(scale_in_place()?).out_dir(format!("{out}/onekernel")).write()?;
    println!("cargo:rerun-if-changed=build.rs");
    Ok(())
}
