//! Boolean logic over specialization constants (variant axes) compiles to valid SPIR-V
//! and computes what the interpreter computes, for every variant, in the forms glslang
//! got wrong as written (an `&&` / `||` whose right operand is itself logic; the GLSL
//! printer writes those as `?:`, docs/CODEGEN.md, "Specialization constants and
//! glslang") and in those it compiles. Without the rewrite the first test fails with
//! spirv-val's "ID … has not been defined".

use onekernel_codegen::{spirv, templates, Builder};
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::manifest::Manifest;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};

#[kernel(workgroup = 32, variants(a = [false, true], b = [false, true], c = [false, true]))]
fn spec_logic(#[len(num_groups().x * 32)] out: &mut [u32]) {
    let t = local_id().x;
    let mut acc = select(a && (!b || c), 512u32, 256u32);
    acc += select(a || (b && c), 1u32, 2u32);
    acc += select(a && select(b, c, a), 4u32, 8u32);
    acc += select(!(b && !c), 16u32, 32u32);
    acc += select((a || b) && c, 64u32, 128u32);
    for e in 0..select(c || (a && !b), 4u32, 2u32) {
        acc += 1024 * e;
    }
    out[group_id().x * 32 + t] = acc;
}

#[test]
fn compound_spec_constant_conditions_give_valid_spirv() {
    let k = spec_logic().unwrap();
    let glsl = templates::glsl(&k).unwrap();
    let words = spirv::compile(&k.name, &glsl).unwrap_or_else(|e| panic!("{e}\n{glsl}"));
    spirv::validate(&k.name, &words).unwrap_or_else(|e| panic!("{e}\n{glsl}"));
    assert!(glsl.contains("? true :") && glsl.contains(": false)"), "the nested forms are written as ?:\n{glsl}");
}

#[test]
fn compound_spec_constant_conditions_compute_the_interpreters_values_on_vulkan() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let kernels = vec![spec_logic().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-spec-logic-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let mut cpu = CpuBackend::new(kernels);
    let case = Case::new("2 groups", [2, 1, 1]).buffer("out", 64, Fill::Zeros);
    let k = &m.kernels[0];
    assert_eq!(k.variants.len(), 8);
    for v in &k.variants {
        let verdict = validate(&mut vk, &mut cpu, k, &dir, v, &case, 3, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(verdict.passed, "{} {verdict:#?}", v.label);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
