//! Every catalogue kernel, every variant, every validation case on Vulkan against the
//! reference interpreter, bitwise (lavapipe in CI; whatever device the machine has
//! otherwise), with the Khronos validation layer turning any message into a failure.
//! The negative control perturbs one input of the device run and must be caught.

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::{Backend, BackendError};
use std::path::PathBuf;

fn generated() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated")
}

fn manifest() -> Manifest {
    serde_json::from_slice(&std::fs::read(generated().join("manifest.json")).unwrap()).unwrap()
}

fn vulkan() -> Option<Vulkan> {
    match Vulkan::new() {
        Ok(v) => Some(v),
        Err(e) => {
            assert!(std::env::var("CI").is_err(), "Vulkan (lavapipe) is required in CI: {e}");
            eprintln!("SKIPPED: {e}");
            None
        }
    }
}

fn reference() -> CpuBackend {
    CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()))
}

#[test]
fn every_kernel_variant_and_case_is_bitwise_equal_to_the_interpreter() {
    let Some(mut vk) = vulkan() else { return };
    eprintln!("device: {:?}", vk.info());
    let mut cpu = reference();
    let m = manifest();
    let mut checked = 0;
    let mut skipped = Vec::new();
    for k in &m.kernels {
        let cases = onekernel_kernels::cases::validation_cases(&k.name).unwrap_or_else(|| panic!("no validation cases for `{}`", k.name));
        for v in &k.variants {
            for (i, case) in cases.iter().enumerate() {
                match validate(&mut vk, &mut cpu, k, &generated(), v, case, 1000 + i as u64, ValidateOptions::default()) {
                    Ok(verdict) => assert!(verdict.passed, "{verdict:#?}"),
                    // Only a variant that needs more shared memory than the device has
                    // (lavapipe: 32 KiB), or register tiles where it has no cooperative
                    // matrices, may be left out, and never silently.
                    Err(BackendError::Unsupported { kernel, variant, reason, .. }) => {
                        let tiles = k.tiles.is_some() && reason.contains("register tiles");
                        assert!(v.shared_bytes > 32 * 1024 || tiles, "{kernel} {variant}: {reason}");
                        eprintln!("SKIPPED on this device: {kernel} {variant}: {reason}");
                        skipped.push(format!("{kernel} {variant}"));
                    }
                    Err(e) => panic!("{e}"),
                }
                checked += 1;
            }
        }
    }
    assert!(checked - skipped.len() >= 9, "checked {checked} kernel × variant × case combinations, skipped {}", skipped.len());
}

#[test]
fn a_perturbed_input_is_reported_as_a_mismatch() {
    let Some(mut vk) = vulkan() else { return };
    let mut cpu = reference();
    let m = manifest();
    let k = m.kernel("softmax_rows").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("softmax_rows").unwrap()[1];
    let v = validate(&mut vk, &mut cpu, k, &generated(), &k.variants[0], case, 7, ValidateOptions { perturb_input: true }).unwrap();
    assert!(!v.passed && v.mismatches > 0, "{v:#?}");
    assert!(v.first_mismatch.as_deref().unwrap_or("").contains("y["), "{v:#?}");
}

#[test]
fn wrong_arguments_are_rejected_before_launch() {
    let Some(mut vk) = vulkan() else { return };
    let m = manifest();
    let k = m.kernel("rms_norm_f16").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("rms_norm_f16").unwrap()[0];
    let mut args = onekernel_runtime::validate::inputs(k, case, 1).unwrap();
    args.set("x", onekernel_runtime::ArgValue::Buffer(onekernel_runtime::HostBuffer::from_f32(&[1.0; 100])));
    let launch = onekernel_runtime::Launch { kernel: k, artifacts: &generated(), spec: &[], groups: case.groups };
    let e = vk.launch(&launch, &mut args).unwrap_err().to_string();
    assert_eq!(e, "kernel `rms_norm_f16` (vulkan): buffer `x` is declared &[f16] but a f32 buffer was given");
}

#[test]
fn a_buffer_shorter_than_its_declared_length_is_rejected_before_launch() {
    let Some(mut vk) = vulkan() else { return };
    let m = manifest();
    let k = m.kernel("softmax_rows").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("softmax_rows").unwrap()[1];
    let mut args = onekernel_runtime::validate::inputs(k, case, 1).unwrap();
    let launch = onekernel_runtime::Launch { kernel: k, artifacts: &generated(), spec: &[], groups: [5, 1, 1] };
    let e = vk.launch(&launch, &mut args).unwrap_err().to_string();
    assert_eq!(e, "kernel `softmax_rows` (vulkan): buffer `x` has 4000 elements but the kernel declares at least (num_groups().x * n_cols) = 5000 for this launch");
    // The same launch over the 4 rows the buffers hold runs.
    let launch = onekernel_runtime::Launch { groups: [4, 1, 1], ..launch };
    vk.launch(&launch, &mut args).unwrap();
}

#[test]
fn a_grid_past_the_device_limit_is_rejected_before_launch() {
    let Some(mut vk) = vulkan() else { return };
    let m = manifest();
    let k = m.kernel("copy_words").unwrap();
    let case = &onekernel_kernels::cases::validation_cases("copy_words").unwrap()[0];
    let mut args = onekernel_runtime::validate::inputs(k, case, 1).unwrap();
    // 2^20 workgroups on y: past every Vulkan device's limit there (lavapipe and NVIDIA
    // offer 65535); copy_words' buffers are sized by `n`, so only the grid is wrong.
    let launch = onekernel_runtime::Launch { kernel: k, artifacts: &generated(), spec: &[], groups: [1, 1 << 20, 1] };
    let e = vk.launch(&launch, &mut args).unwrap_err();
    assert!(matches!(e, BackendError::Arguments { .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.starts_with("kernel `copy_words` (vulkan): 1048576 workgroups on axis 1 exceed the device limit "), "{e}");
    // Within the limit the same arguments run.
    let launch = onekernel_runtime::Launch { groups: case.groups, ..launch };
    vk.launch(&launch, &mut args).unwrap();
}

#[test]
fn every_kernel_is_bitwise_equal_on_nvidia_vulkan_where_present() {
    let mut vk = match Vulkan::with_device(Some("nvidia")) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("SKIPPED (no NVIDIA GPU here): {e}");
            return;
        }
    };
    let mut cpu = reference();
    let m = manifest();
    for k in &m.kernels {
        for v in &k.variants {
            for (i, case) in onekernel_kernels::cases::validation_cases(&k.name).unwrap().iter().enumerate() {
                let verdict = validate(&mut vk, &mut cpu, k, &generated(), v, case, 1000 + i as u64, ValidateOptions::default()).unwrap();
                assert!(verdict.passed, "{verdict:#?}");
            }
        }
    }
}
