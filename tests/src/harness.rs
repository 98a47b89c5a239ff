//! What the integration tests share: the repository root, the generated manifest, and
//! the backends present (with a visible line for each one that is not).

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::cuda::Cuda;
use onekernel_runtime::msl_emu::MslEmu;
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::Backend;
use std::path::PathBuf;

/// The repository root: `ONEKERNEL_ROOT` where set (test binaries run on another
/// machine than the one that built them), else the checkout they were built from.
pub fn root() -> PathBuf {
    match std::env::var_os("ONEKERNEL_ROOT") {
        Some(r) => PathBuf::from(r),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."),
    }
}

/// `generated/manifest.json`, checked and its artifacts' hashes verified once per test
/// process (every later call clones the loaded manifest).
pub fn manifest() -> Manifest {
    static LOADED: std::sync::OnceLock<Manifest> = std::sync::OnceLock::new();
    LOADED.get_or_init(|| onekernel_runtime::manifest::load(&root().join("generated")).unwrap_or_else(|e| panic!("{e}"))).clone()
}

/// The reference interpreter with every catalogue kernel.
pub fn cpu() -> CpuBackend {
    CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().expect("catalogue kernel")))
}

/// The Vulkan device, or `None` after a SKIPPED line where there is none (never in CI,
/// which has lavapipe).
pub fn vulkan_or_skip() -> Option<Vulkan> {
    match Vulkan::new() {
        Ok(vk) => Some(vk),
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {e}");
            println!("SKIPPED on Vulkan: {e}");
            None
        }
    }
}

/// The GPU backends present: Vulkan (lavapipe, required in CI) and CUDA (the GPU
/// machine); each absent one prints a SKIPPED line.
pub fn gpu_backends() -> Vec<Box<dyn Backend>> {
    let mut v: Vec<Box<dyn Backend>> = Vec::new();
    if let Some(vk) = vulkan_or_skip() {
        v.push(Box::new(vk));
    }
    match Cuda::new() {
        Ok(c) => v.push(Box::new(c)),
        Err(e) => println!("SKIPPED on CUDA (no NVIDIA GPU here): {e}"),
    }
    v
}

/// The msl-emu backend (the generated MSL run on the CPU), or `None` after a SKIPPED line
/// where there is no `clang++` (never in CI, which installs it).
pub fn msl_emu_or_skip() -> Option<MslEmu> {
    match MslEmu::new() {
        Ok(e) => Some(e),
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "msl-emu (clang++) is required in CI: {e}");
            println!("SKIPPED on msl-emu: {e}");
            None
        }
    }
}

/// [`all_backends`], then msl-emu: where the fixtures and the kernel families' own
/// tests run.
pub fn all_backends_and_msl_emu() -> Vec<Box<dyn Backend>> {
    let mut v = all_backends();
    if let Some(e) = msl_emu_or_skip() {
        v.push(Box::new(e));
    }
    v
}

/// The interpreter first, then [`gpu_backends`].
pub fn all_backends() -> Vec<Box<dyn Backend>> {
    let mut v: Vec<Box<dyn Backend>> = vec![Box::new(cpu())];
    v.extend(gpu_backends());
    v
}

/// The fixture files of `tests/fixtures/<dir>/` (`*.json`), sorted, with their parsed
/// JSON; panics naming the directory when it holds none, or the file that cannot be read
/// or parsed.
pub fn fixture_files(dir: &str) -> Vec<(std::path::PathBuf, serde_json::Value)> {
    let d = root().join("tests/fixtures").join(dir);
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&d)
        .unwrap_or_else(|e| panic!("{}: {e}", d.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no fixtures in {}", d.display());
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            let v = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, v)
        })
        .collect()
}

/// The JSON of fixture `name` in `tests/fixtures/<dir>/` (panics naming the file when it
/// cannot be read or parsed).
pub fn fixture_json(dir: &str, name: &str) -> serde_json::Value {
    let p = root().join("tests/fixtures").join(dir).join(name);
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Runs the attention fixture `name` of `tests/fixtures/<dir>/` on every backend of
/// [`all_backends_and_msl_emu`] through the shared fixture runner; panics unless each
/// run meets the file's bounds. Returns the results, one per backend.
pub fn check_attention_fixture(dir: &str, name: &str) -> Vec<onekernel_ops::fixture::FixtureResult> {
    let fx = fixture_json(dir, name);
    let m = manifest();
    let mut results = Vec::new();
    for mut b in all_backends_and_msl_emu() {
        let r = onekernel_ops::fixture::run_attention(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &m, &root().join("generated")))
            .unwrap_or_else(|e| panic!("{name} on {}: {e}", b.name()));
        let cosine = r.cosine.map(|c| format!(", cosine {c:.8}")).unwrap_or_default();
        println!(
            "{name} on {}: NMSE {:.3e} (≤ {:e}), max |err| {:.3e} (≤ {:e}){cosine}",
            r.backend, r.nmse, r.nmse_bound, r.max_abs, r.max_abs_bound
        );
        assert!(r.passed, "{name} on {}: {r:?}", b.name());
        results.push(r);
    }
    results
}

/// Runs `f` on every backend of [`all_backends_and_msl_emu`] with the checked-in
/// catalogue; every result must equal the interpreter's (the first), which is returned.
pub fn on_every_backend<T: PartialEq + std::fmt::Debug>(what: &str, f: impl Fn(&mut onekernel_ops::Device) -> T) -> T {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut results = Vec::new();
    for b in all_backends_and_msl_emu().iter_mut() {
        let name = b.name();
        results.push((name, f(&mut onekernel_ops::Device::new(b.as_mut(), &m, &artifacts))));
    }
    let (first, want) = results.remove(0);
    for (name, got) in results {
        assert!(got == want, "{what}: {name} differs from {first}");
    }
    want
}
