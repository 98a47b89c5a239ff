//! clang as the parse and type checker of generated MSL and CUDA (no Metal or CUDA
//! toolchain is needed): each file against the small headers in `tests/shim/` that
//! declare what the generated code uses.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether clang is installed; where it is not, a SKIPPED line naming `what` (never in
/// CI, where `scripts/deps.sh` installs it).
pub fn available(what: &str) -> bool {
    let found = Command::new("clang").arg("--version").output().is_ok_and(|o| o.status.success());
    if !found {
        assert!(std::env::var("CI").is_err(), "clang is required in CI (scripts/deps.sh installs it)");
        eprintln!("SKIPPED: clang not found; {what} did not run");
    }
    found
}

/// `tests/shim/`.
fn shim() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("shim")
}

/// Parses and type-checks an MSL file as C++17 against the Metal shim.
pub fn check_metal(file: &Path) -> Result<(), String> {
    let include = shim().join("metal");
    let args = ["-fsyntax-only", "-x", "c++", "-std=c++17", "-Wno-unknown-attributes", "-Wno-unused-value", "-I"];
    run(Command::new("clang").args(args).arg(include).arg(file))
}

/// Parses and type-checks a CUDA file for `arch` (`sm_70`, `sm_80`, …), device code
/// only, against the CUDA shim.
pub fn check_cuda(file: &Path, arch: &str) -> Result<(), String> {
    let args = ["-fsyntax-only", "-x", "cuda", "--cuda-device-only", "-nocudainc", "-nocudalib", "--no-cuda-version-check", "-std=c++17"];
    let include = shim().join("cuda/cuda_shim.h");
    run(Command::new("clang").args(args).arg(format!("--cuda-gpu-arch={arch}")).arg("-include").arg(include).arg(file))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}
