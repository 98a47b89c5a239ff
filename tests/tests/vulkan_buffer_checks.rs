//! The storage-buffer bounds-check switch (docs/RUNTIME.md): where the driver offers
//! `VK_EXT_pipeline_robustness` the runtime builds pipelines without the driver's
//! checks, `ONEKERNEL_VK_BUFFER_CHECKS=1` keeps them, the device report says which, and
//! kernels give the same bits either way. (Its own test binary, one test: it sets an
//! environment variable the backend reads when it opens the device.)

use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::Backend;
use onekernel_tests::harness;

const UNCHECKED: &str = "disabled per pipeline";
const DRIVER_DEFAULT: &str = "driver default";

fn bitwise_on(vk: &mut Vulkan, kernel: &str) {
    let dir = harness::root().join("generated");
    let m = harness::manifest();
    let k = m.kernel(kernel).unwrap();
    let mut cpu = harness::cpu();
    for (i, case) in onekernel_kernels::cases::validation_cases(kernel).unwrap().iter().enumerate() {
        let v = validate(vk, &mut cpu, k, &dir, &k.variants[0], case, 2000 + i as u64, ValidateOptions::default()).unwrap();
        assert!(v.passed, "{} ({}): {v:#?}", kernel, vk.info().buffer_checks);
    }
}

#[test]
fn the_bounds_check_switch_is_reported_and_keeps_the_bits() {
    std::env::remove_var("ONEKERNEL_VK_BUFFER_CHECKS");
    let Some(mut vk) = harness::vulkan_or_skip() else { return };
    let default_mode = vk.info().buffer_checks.clone();
    assert!(default_mode.starts_with(UNCHECKED) || default_mode.starts_with(DRIVER_DEFAULT), "{default_mode}");
    bitwise_on(&mut vk, "softmax_rows");
    drop(vk);

    std::env::set_var("ONEKERNEL_VK_BUFFER_CHECKS", "1");
    let mut checked = harness::vulkan_or_skip().unwrap();
    assert!(checked.info().buffer_checks.starts_with(DRIVER_DEFAULT), "{}", checked.info().buffer_checks);
    bitwise_on(&mut checked, "softmax_rows");
    drop(checked);
    std::env::remove_var("ONEKERNEL_VK_BUFFER_CHECKS");

    // NVIDIA's driver 580 offers the extension, so there the default must be unchecked.
    match Vulkan::with_device(Some("nvidia")) {
        Ok(mut nv) => {
            assert!(nv.info().buffer_checks.starts_with(UNCHECKED), "{}", nv.info().buffer_checks);
            bitwise_on(&mut nv, "attn_decode_chunk");
        }
        Err(e) => eprintln!("SKIPPED the NVIDIA part (no NVIDIA GPU here): {e}"),
    }
}
