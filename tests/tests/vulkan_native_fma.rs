//! Negative control for the fma switch: llvmpipe's GLSL `fma` is not fused, so forcing
//! the native path there must break bit-exactness of a kernel that accumulates with
//! `fma` — proof that the exact emulation is what makes lavapipe match. (Its own test
//! binary: it sets an environment variable the backend reads at start.)

use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::Backend;
use onekernel_tests::harness;

#[test]
fn native_fma_on_llvmpipe_is_caught_by_the_validator() {
    std::env::set_var("ONEKERNEL_VK_NATIVE_FMA", "1");
    let Some(mut vk) = harness::vulkan_or_skip() else { return };
    if !vk.info().device.contains("llvmpipe") {
        eprintln!("SKIPPED: the device ({}) is not llvmpipe", vk.info().device);
        return;
    }
    let dir = harness::root().join("generated");
    let m = harness::manifest();
    let k = m.kernel("rms_norm_f32").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("rms_norm_f32").unwrap()[1];
    let mut cpu = harness::cpu();
    let v = validate(&mut vk, &mut cpu, k, &dir, &k.variants[0], case, 1001, ValidateOptions::default()).unwrap();
    assert!(!v.passed, "unfused native fma should differ from the reference: {v:#?}");
}
