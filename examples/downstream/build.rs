//! Generates every backend for this crate's kernels (`src/kernels.rs`) at build time,
//! through the code generator's library API (no shell-out).

#[path = "src/kernels.rs"]
mod kernels;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::var("OUT_DIR")?;
    onekernel_codegen::Builder::new()
        .kernel(kernels::scale_in_place()?)
        // A kernel with a type axis is a family: one kernel per type.
        .kernels(kernels::add_bias()?)
        .out_dir(format!("{out}/onekernel"))
        .write()?;
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/kernels.rs");
    Ok(())
}
