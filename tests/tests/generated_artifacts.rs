//! The checked-in `generated/` directory against a fresh generation, every SPIR-V module
//! against spirv-val, every MSL and CUDA file against a real C++ front end (clang), and
//! the determinism of generation.

use onekernel_codegen::{spirv, Builder};
use onekernel_tests::clang;
use std::path::{Path, PathBuf};

fn generated_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated")
}

fn catalogue() -> Builder {
    // Touch the kernels crate so that its registrations are linked in.
    let _ = onekernel_kernels::all();
    Builder::new().catalogue().expect("catalogue loads")
}

fn files_with_ext(sub: &str, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(generated_dir().join(sub))
        .map(|rd| rd.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn checked_in_generated_dir_equals_a_fresh_generation() {
    let g = catalogue().generate().expect("generation succeeds");
    let diffs = g.compare_with(&generated_dir()).unwrap();
    assert!(
        diffs.is_empty(),
        "generated/ is stale; run `cargo run -p onekernel-cli -- gen`:\n{}",
        diffs.iter().map(|d| format!("  {d}")).collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn generation_is_deterministic_across_runs_and_thread_counts() {
    let a = catalogue().threads(1).generate().unwrap();
    let b = catalogue().threads(4).generate().unwrap();
    let c = catalogue().threads(2).generate().unwrap();
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn every_checked_in_spirv_module_passes_spirv_val() {
    let spvs = files_with_ext("vulkan", "spv");
    assert!(!spvs.is_empty(), "no SPIR-V modules in generated/vulkan");
    for p in spvs {
        let bytes = std::fs::read(&p).unwrap();
        assert_eq!(bytes.len() % 4, 0, "{}", p.display());
        let words: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        assert_eq!(words[0], 0x0723_0203, "SPIR-V magic in {}", p.display());
        spirv::validate(&p.display().to_string(), &words).unwrap();
    }
}

#[test]
fn spirv_val_rejects_a_broken_module() {
    // Negative control: truncate a valid module; the validator must object.
    let p = &files_with_ext("vulkan", "spv")[0];
    let bytes = std::fs::read(p).unwrap();
    let words: Vec<u32> = bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    assert!(spirv::validate("truncated", &words[..words.len() / 2]).is_err());
}

/// naga reads and validates every specialized module except where its SPIR-V reader lacks
/// a feature, and those gaps are exactly the known ones: `UnpackDouble2x32` (GLSL.std.450
/// instruction 65) in the exact-fma emulation taken when the native-fma spec constant
/// (id 1000) is false, 8-bit storage, cooperative matrices. A new gap fails here, to be
/// looked at and listed in `docs/CHECKS.md`.
#[test]
fn naga_validates_every_specialized_module_it_can_read_and_its_gaps_are_the_known_ones() {
    let g = catalogue().generate().expect("generation succeeds (naga's findings fail it)");
    let manifest: onekernel_codegen::manifest::Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let mut valid = 0;
    for k in &manifest.kernels {
        let r = &g.naga[&k.name];
        let expected = |variant: &str, why: &str| match why {
            "UnsupportedExtInst(65)" => variant.contains("spec1000=false"),
            "UnsupportedCapability(StorageBuffer8BitAccess)" => k.buffers.iter().any(|b| b.elem.size_bytes() == 1),
            "UnsupportedCapability(CooperativeMatrixKHR)" => k.tiles.is_some(),
            _ => false,
        };
        for (variant, why) in &r.not_checkable {
            assert!(expected(variant, why), "kernel `{}` variant `{variant}`: naga cannot read it: {why}", k.name);
        }
        let facts = 1 << (k.vulkan.fma_spec_id.is_some() as u32 + k.vulkan.f16_spec_id.is_some() as u32);
        assert_eq!(r.valid + r.not_checkable.len(), k.variants.len() * facts, "kernel `{}`", k.name);
        valid += r.valid;
    }
    assert!(valid >= 250, "only {valid} modules validated by naga");
}

#[test]
fn every_metal_file_parses_and_type_checks() {
    if !clang::available("the MSL parse checks") {
        return;
    }
    let files = files_with_ext("metal", "metal");
    assert!(!files.is_empty());
    for f in files {
        clang::check_metal(&f).unwrap_or_else(|e| panic!("{}:\n{e}", f.display()));
    }
}

#[test]
fn every_cuda_file_parses_and_type_checks() {
    if !clang::available("the CUDA parse checks") {
        return;
    }
    let files = files_with_ext("cuda", "cu");
    assert!(!files.is_empty());
    for f in files {
        // Files with register tiles for sm_80, the first with their `mma.sync` shape (for
        // sm_70 the helpers stop with an `#error`); the others for sm_70.
        if std::fs::read_to_string(&f).is_ok_and(|s| s.contains("ok_tile_mma(")) {
            clang::check_cuda(&f, "sm_80").unwrap_or_else(|e| panic!("{} (sm_80):\n{e}", f.display()));
            assert!(clang::check_cuda(&f, "sm_70").is_err_and(|e| e.contains("sm_80")), "{}: tiles on sm_70 must not compile", f.display());
        } else {
            clang::check_cuda(&f, "sm_70").unwrap_or_else(|e| panic!("{}:\n{e}", f.display()));
        }
    }
}

#[test]
fn parse_checks_reject_a_broken_template_output() {
    // Negative control: a generated file with an undeclared identifier must not parse.
    if !clang::available("the parse checks' negative control") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("onekernel-parse-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = std::fs::read_to_string(&files_with_ext("metal", "metal")[0]).unwrap();
    let broken = dir.join("broken.metal");
    std::fs::write(&broken, src.replacen("ok_lindex]", "ok_undeclared_name]", 1) + "\nstatic float oops() { return undeclared_thing; }\n").unwrap();
    assert!(clang::check_metal(&broken).is_err());
    let cu = std::fs::read_to_string(&files_with_ext("cuda", "cu")[0]).unwrap();
    let broken = dir.join("broken.cu");
    std::fs::write(&broken, cu + "\nstatic __device__ float oops() { return undeclared_thing; }\n").unwrap();
    assert!(clang::check_cuda(&broken, "sm_70").is_err());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every helper a generated file defines is called in it: the helper files' functions
/// (`templates/*/helpers.*`) appear only where the kernel needs them. A helper's name
/// occurs at least twice — its definition and a use (the copies of a macro-built family
/// such as `ok_async_copy##BYTES` count as one name). And an f32-only kernel
/// (`rms_norm_f32`) carries none of the bf16, f16, funnel-shift or async-copy helpers
/// that the helper file defines.
#[test]
fn every_generated_file_carries_only_the_helpers_it_calls() {
    let templates = Path::new(env!("CARGO_MANIFEST_DIR")).join("../templates");
    let mut checked = 0;
    for (sub, ext, helpers) in [("cuda", "cu", "cuda/helpers.cuh"), ("vulkan", "comp", "glsl/helpers.glsl"), ("metal", "metal", "msl/helpers.metal")]
    {
        let helper_text = std::fs::read_to_string(templates.join(helpers)).unwrap();
        // The names the helper file defines: an `ok_` identifier before a `(` on a line
        // that is not a comment.
        let mut defined: Vec<String> = Vec::new();
        for line in helper_text.lines().filter(|l| !l.trim_start().starts_with("//")) {
            let Some(at) = line.find('(') else { continue };
            if let Some(start) = line[..at].rfind("ok_") {
                let name = line[start..at].trim_end_matches("##BYTES").to_string();
                // The copies of one macro-built family (`ok_async_copy4/8/16`, defined
                // together before sm_80) count as one name.
                let family = name.split("##").next().unwrap_or_default().trim_end_matches(|c: char| c.is_ascii_digit()).to_string();
                if family.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') && !defined.contains(&family) {
                    defined.push(family);
                }
            }
        }
        assert!(defined.len() >= 10, "{helpers}: {defined:?}");
        for f in files_with_ext(sub, ext) {
            let text = std::fs::read_to_string(&f).unwrap();
            for name in &defined {
                let n = text.matches(name.as_str()).count();
                assert!(n != 1, "{}: helper `{name}` is defined but never called", f.display());
            }
            checked += 1;
        }
        if sub == "cuda" {
            let f32_only = std::fs::read_to_string(generated_dir().join("cuda/rms_norm_f32.cu")).unwrap();
            for unused in ["ok_bf16_to_f32", "ok_f16_to_f32", "ok_funnel_shr_u32", "ok_f32_to_f16", "ok_async_commit"] {
                assert!(!f32_only.contains(unused), "rms_norm_f32.cu still carries {unused}");
            }
        }
    }
    assert!(checked >= 60, "{checked}");
}
