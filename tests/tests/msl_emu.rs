//! The generated MSL executed on the CPU (the `msl-emu` backend): every catalogue kernel,
//! variant and validation case against the reference interpreter, bitwise for `exact`
//! kernels and within the NMSE bound for `fast` ones. Negative controls: the same MSL
//! with one index changed, and with one barrier removed, must each fail validation.

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::Backend;
use onekernel_tests::harness::{cpu, manifest, msl_emu_or_skip, root};
use std::path::{Path, PathBuf};

#[test]
fn every_kernel_variant_and_case_matches_the_interpreter_on_msl_emu() {
    let Some(mut emu) = msl_emu_or_skip() else { return };
    let mut reference = cpu();
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut checked = 0;
    for k in &m.kernels {
        let cases = onekernel_kernels::cases::validation_cases(&k.name).unwrap_or_else(|| panic!("no validation cases for `{}`", k.name));
        for v in &k.variants {
            for (i, case) in cases.iter().enumerate() {
                let verdict = validate(&mut emu, &mut reference, k, &artifacts, v, case, 1000 + i as u64, ValidateOptions::default())
                    .unwrap_or_else(|e| panic!("{} {} {}: {e}", k.name, v.label, case.label));
                assert!(verdict.passed, "{verdict:#?}");
                checked += 1;
            }
        }
    }
    println!("msl-emu: {checked} kernel × variant × case verdicts, all passed");
    assert!(checked > 400, "{checked}");
}

/// A copy of `generated/` in a fresh directory with `metal/<file>` edited by `edit`.
fn generated_with(file: &str, tag: &str, edit: impl Fn(&str) -> String) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onekernel-msl-emu-control-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("metal")).unwrap();
    std::fs::copy(root().join("generated/manifest.json"), dir.join("manifest.json")).unwrap();
    let text = std::fs::read_to_string(root().join("generated/metal").join(file)).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(dir.join("metal").join(file), edited).unwrap();
    dir
}

/// Validates `rms_norm_f32` from `artifacts` on its three cases; whether all passed.
fn rms_norm_passes(artifacts: &Path) -> bool {
    let Some(mut emu) = msl_emu_or_skip() else { return false };
    let mut reference = cpu();
    let m: Manifest = manifest();
    let k = m.kernel("rms_norm_f32").unwrap();
    let cases = onekernel_kernels::cases::validation_cases(&k.name).unwrap();
    cases.iter().enumerate().all(|(i, case)| {
        let v = validate(&mut emu, &mut reference, k, artifacts, &k.variants[0], case, 1000 + i as u64, ValidateOptions::default()).unwrap();
        println!("{} on {}: passed {}, {} mismatches", case.label, emu.name(), v.passed, v.mismatches);
        v.passed
    })
}

#[test]
fn a_wrong_index_in_the_msl_fails_validation() {
    if msl_emu_or_skip().is_none() {
        return;
    }
    assert!(rms_norm_passes(&root().join("generated")), "the unedited kernel must pass");
    // The weight of column 0 for every column.
    let dir = generated_with("rms_norm_f32.metal", "index", |t| t.replace("* w[c_8]", "* w[0u]"));
    assert!(!rms_norm_passes(&dir), "a wrong index passed validation");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_removed_barrier_in_the_msl_fails_validation() {
    if msl_emu_or_skip().is_none() {
        return;
    }
    // The barrier between each invocation's store of its partial sum and the tree's
    // first reads of other invocations' sums.
    let dir = generated_with("rms_norm_f32.metal", "barrier", |t| {
        let store = "ok_red_f32[ok_lindex] = acc_3;\n";
        let at = t.find(store).expect("the reduction's store") + store.len();
        let rest = &t[at..];
        let barrier = rest.find("threadgroup_barrier(mem_flags::mem_threadgroup);").expect("a barrier after it");
        format!("{}{}{}", &t[..at], &rest[..barrier], &rest[barrier + "threadgroup_barrier(mem_flags::mem_threadgroup);".len()..])
    });
    assert!(!rms_norm_passes(&dir), "a missing barrier passed validation");
    let _ = std::fs::remove_dir_all(dir);
}
