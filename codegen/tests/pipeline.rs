//! The generation pipeline piece by piece: the NoContraction pass, the reflection
//! cross-check and its negative control, errors that name the kernel and backend.

use onekernel_codegen::generate::{cross_check_interface, generate_kernel};
use onekernel_codegen::{spirv, templates, CodegenError};
use onekernel_dsl::ir::{Param, ParamKind, SpanId};
use onekernel_dsl::types::Scalar;
use onekernel_macros::kernel;
use rspirv::dr::Operand;
use rspirv::spirv::{Decoration, Op};

/// c = a·b + c, elementwise.
#[kernel(workgroup = 64)]
fn muladd(a: &[f32], b: &[f32], c: &mut [f32], #[push] n: u32) {
    let i = global_id().x;
    if i < n {
        c[i] = a[i] * b[i] + c[i];
    }
}

fn float_ops_without_no_contraction(words: &[u32]) -> usize {
    let m = rspirv::dr::load_words(words).unwrap();
    let decorated: Vec<u32> = m
        .annotations
        .iter()
        .filter(|a| a.operands.get(1) == Some(&Operand::Decoration(Decoration::NoContraction)))
        .filter_map(|a| match a.operands[0] {
            Operand::IdRef(id) => Some(id),
            _ => None,
        })
        .collect();
    m.functions
        .iter()
        .flat_map(|f| f.blocks.iter().flat_map(|b| b.instructions.iter()))
        .filter(|i| matches!(i.class.opcode, Op::FMul | Op::FAdd | Op::FSub))
        .filter(|i| !decorated.contains(&i.result_id.unwrap()))
        .count()
}

#[test]
fn every_float_operation_is_marked_no_contraction() {
    let k = muladd().unwrap();
    let raw = spirv::compile(&k.name, &templates::glsl(&k).unwrap()).unwrap();
    assert!(float_ops_without_no_contraction(&raw) > 0, "shaderc alone leaves a·b + c contractible");
    let fixed = spirv::forbid_contraction(&raw).unwrap();
    assert_eq!(float_ops_without_no_contraction(&fixed), 0);
    spirv::validate(&k.name, &fixed).unwrap();
    assert_eq!(spirv::forbid_contraction(&fixed).unwrap(), fixed, "the pass is idempotent");
}

#[test]
fn reflection_matches_the_generator_and_a_mismatch_is_caught() {
    let k = muladd().unwrap();
    let out = generate_kernel(&k).unwrap();
    let r = &out.manifest.vulkan.reflection;
    assert_eq!(r.bindings, vec![(0, 0), (0, 1), (0, 2)]);
    assert_eq!(r.push_offsets, vec![0]);
    assert_eq!(r.push_size, 4);
    assert_eq!(r.local_size, [64, 1, 1]);
    // Negative control: the same module checked against a different intent.
    let mut other = k.clone();
    other.workgroup = [128, 1, 1];
    let e = cross_check_interface(&other, &onekernel_codegen::KernelInfo::of(&other), r, 3, 1, 0).unwrap_err().to_string();
    assert!(e.contains("kernel `muladd` (vulkan): reflection disagrees") && e.contains("local size"), "{e}");
    let e = cross_check_interface(&k, &onekernel_codegen::KernelInfo::of(&k), r, 4, 1, 0).unwrap_err().to_string();
    assert!(e.contains("bindings"), "{e}");
}

#[test]
fn invalid_ir_is_a_generation_error_naming_the_kernel() {
    let mut k = muladd().unwrap();
    for i in 0..32 {
        k.params.push(Param { name: format!("extra{i}"), kind: ParamKind::Push { ty: Scalar::U32 }, span: SpanId::NONE });
    }
    let e = generate_kernel(&k).err().expect("rejected");
    assert!(matches!(e, CodegenError::Invalid { .. }));
    let msg = e.to_string();
    assert!(msg.contains("kernel `muladd`") && msg.contains("132 bytes"), "{msg}");
}

#[test]
fn a_glsl_compile_error_names_kernel_and_backend() {
    let e = spirv::compile("broken_kernel", "#version 450\nvoid main() { undefined_fn(); }\n").unwrap_err().to_string();
    assert!(e.starts_with("kernel `broken_kernel` (vulkan)") && e.contains("undefined_fn"), "{e}");
}
