//! What the register-tile tests share (`tests/tiles.rs`, `tests/panels.rs`): their
//! kernels generated into a temporary directory, f16 values packed two to a word, and
//! the measure of a backend's products against the interpreter's.

use onekernel_codegen::Builder;
use onekernel_dsl::ir::Kernel;
use onekernel_dsl::manifest::Manifest;
use std::path::PathBuf;

/// NMSE a backend's tile products may show against the interpreter's: f32 sums of exact
/// f16 products in the hardware's order.
pub const NMSE_BOUND: f64 = 1e-12;

/// Test kernels generated into a temporary directory (removed when dropped).
pub struct Generated {
    /// The kernels, for the interpreter.
    pub kernels: Vec<Kernel>,
    /// Their manifest.
    pub manifest: Manifest,
    /// The directory holding the generated files.
    pub dir: PathBuf,
}

impl Generated {
    /// Generates `kernels` into a directory named after `tag` and this process.
    pub fn new(kernels: Vec<Kernel>, tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("onekernel-{tag}-{}", std::process::id()));
        let g = kernels.iter().fold(Builder::new(), |b, k| b.kernel(k.clone())).out_dir(&dir).write().expect("test kernels generate");
        let manifest: Manifest = serde_json::from_slice(&g.files["manifest.json"]).expect("the generated manifest parses");
        Generated { kernels, manifest, dir }
    }
}

impl Drop for Generated {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `n` normal f16 values (bits) in ±[1/8, 2): every product of two is exact in f32 and
/// their sums round there, so tile products are checked where rounding shows.
pub fn normal_halves(r: &mut crate::Rng, n: usize) -> Vec<u16> {
    (0..n).map(|_| (r.next_u32() as u16 & 0x8fff) | 0x3000).collect()
}

/// f16 values (bits) two to a u32 word, the low half first.
pub fn f16_words(h: &[u16]) -> Vec<u32> {
    h.chunks(2).map(|p| p[0] as u32 | (p.get(1).copied().unwrap_or(0) as u32) << 16).collect()
}

/// NMSE of `got` against `want`, and the elements farther from it than `2^-19 · mag`
/// (or NaN).
pub fn error(got: &[f32], want: &[f32], mag: &[f64]) -> (f64, usize) {
    let (mut num, mut den, mut outside) = (0.0f64, 0.0f64, 0usize);
    for i in 0..want.len() {
        let d = f64::from(got[i]) - f64::from(want[i]);
        num += d * d;
        den += f64::from(want[i]) * f64::from(want[i]);
        if d.abs() > mag[i] * 2f64.powi(-19) || got[i].is_nan() {
            outside += 1;
        }
    }
    (num / den, outside)
}
