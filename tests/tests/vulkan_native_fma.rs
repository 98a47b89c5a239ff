//! Negative control for the fma switch: llvmpipe's GLSL `fma` is not fused, so forcing
//! the native path there must break bit-exactness of a kernel that accumulates with
//! `fma` — proof that the exact emulation is what makes lavapipe match. (Its own test
//! binary: it sets an environment variable the backend reads at start.)

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::Backend;
use std::path::PathBuf;

#[test]
fn native_fma_on_llvmpipe_is_caught_by_the_validator() {
    std::env::set_var("ONEKERNEL_VK_NATIVE_FMA", "1");
    let mut vk = match Vulkan::new() {
        Ok(v) => v,
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {e}");
            eprintln!("SKIPPED: {e}");
            return;
        }
    };
    if !vk.info().device.contains("llvmpipe") {
        eprintln!("SKIPPED: the device ({}) is not llvmpipe", vk.info().device);
        return;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
    let m: Manifest = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let k = m.kernel("rms_norm_f32").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("rms_norm_f32").unwrap()[1];
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let v = validate(&mut vk, &mut cpu, k, &dir, &k.variants[0], case, 1001, ValidateOptions::default()).unwrap();
    assert!(!v.passed, "unfused native fma should differ from the reference: {v:#?}");
}
