//! Negative control for the `ok_f16_unpack_exact` switch (docs/CODEGEN.md): with the
//! switch on, f16 halves widen through the driver's `unpackHalf2x16` alone, so a driver
//! that flushed subnormal halves there would change results. The decode-attention
//! all-subnormal validation case must catch that: here the chunk kernel's SPIR-V is
//! rebuilt with a flushing high-half conversion, and the case must fail with it and pass
//! with the generated module. (Its own test binary: it sets an environment variable the
//! Vulkan backend reads at start.)

use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::Backend;
use onekernel_tests::harness;

#[test]
fn a_flushing_half_conversion_fails_the_all_subnormal_case() {
    std::env::set_var("ONEKERNEL_VK_F16_UNPACK", "1");
    let Some(mut vk) = harness::vulkan_or_skip() else { return };
    assert!(vk.info().f16_widening.starts_with("unpackHalf2x16 (subnormals exact"), "the override is read: {}", vk.info().f16_widening);
    let generated = harness::root().join("generated");
    let m = harness::manifest();
    let k = m.kernel("attn_decode_chunk").unwrap();
    let cases = onekernel_kernels::cases::validation_cases("attn_decode_chunk").unwrap();
    let case = cases.iter().find(|c| c.label.contains("subnormal")).expect("the all-subnormal case");
    let mut cpu = harness::cpu();

    let good = validate(&mut vk, &mut cpu, k, &generated, &k.variants[0], case, 7, ValidateOptions::default()).unwrap();
    assert!(good.passed, "the generated module with the switch on: {good:#?}");

    // The same module, except that the high half of a word flushes when subnormal.
    let glsl = std::fs::read_to_string(generated.join(&k.vulkan.glsl.path)).unwrap();
    let exact = "return unpackHalf2x16(w).y;";
    assert_eq!(glsl.matches(exact).count(), 1, "the high-half helper's conversion");
    let flushing = glsl.replace(exact, "return (w & 0x7c000000u) == 0u ? uintBitsToFloat(w & 0x80000000u) : unpackHalf2x16(w).y;");
    let words = onekernel_codegen::spirv::compile(&k.name, &flushing).unwrap();
    let words = onekernel_codegen::spirv::forbid_contraction(&words).unwrap();
    let dir = std::env::temp_dir().join(format!("onekernel-f16-switch-{}", std::process::id()));
    let spv = dir.join(&k.vulkan.spirv.path);
    std::fs::create_dir_all(spv.parent().unwrap()).unwrap();
    std::fs::write(&spv, onekernel_codegen::spirv::to_bytes(&words)).unwrap();
    // A different key, so that the backend does not reuse the pipeline built above.
    let mut flushed = k.clone();
    flushed.vulkan.spirv.sha256 = "flushing-test-module".into();
    let bad = validate(&mut vk, &mut cpu, &flushed, &dir, &k.variants[0], case, 7, ValidateOptions::default()).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(!bad.passed, "a flushing conversion must not pass the all-subnormal case: {bad:#?}");
}
