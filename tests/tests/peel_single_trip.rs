//! `#[peel_single_trip]` (docs/DSL.md, "Control flow"): where the loop runs exactly once
//! the generated code runs the body without a loop, on every backend's source; the
//! results are the interpreter's, bitwise, on Vulkan (lavapipe in CI) and on CUDA where
//! there is a GPU, for bounds of a variant axis (one or two trips) and of a push constant
//! (zero to three trips).

use onekernel_codegen::{templates, Builder};
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::Literal;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};

/// Order-dependent sums over peeled loops: one of one or two trips (`twice`), one of `n`
/// trips with a nested loop that breaks, and a plain loop for comparison.
#[kernel(workgroup = 32, variants(twice = [false, true]))]
fn peeled(#[len(num_groups().x * 32)] x: &[f32], #[len(num_groups().x * 32)] out: &mut [f32], #[push] n: u32) {
    let g = global_id().x;
    let runs = select(twice, 2u32, 1u32);
    let mut acc = x[g];
    #[peel_single_trip]
    for r in 0..runs {
        acc = fma(acc, 1.5, (r as f32) + 0.25) * 0.75;
    }
    #[peel_single_trip]
    for i in 0..n {
        for j in 0..4u32 {
            if j > i {
                break;
            }
            acc = fma(acc, 0.875, (j as f32) * 0.5);
        }
        acc = acc * 1.125 - (i as f32);
    }
    for i in 0..n {
        acc = acc * 0.5 + (i as f32);
    }
    out[g] = acc;
}

#[test]
fn a_peeled_loop_is_its_body_where_it_runs_once() {
    let k = &peeled().unwrap();
    for (name, src) in [("cuda", templates::cuda(k).unwrap()), ("glsl", templates::glsl(k).unwrap()), ("msl", templates::msl(k).unwrap())] {
        // Two peeled loops, each with its one-trip branch and its loop (the body twice);
        // the plain loop has neither.
        assert_eq!(src.matches(" - 1u == ok_start_").count(), 2, "{name}: one single-trip test per peeled loop\n{src}");
        assert_eq!(src.matches("1.5").count(), 2, "{name}: the first body appears twice\n{src}");
        assert_eq!(src.matches("0.875").count(), 2, "{name}: the second body appears twice\n{src}");
        assert_eq!(src.matches("1.125").count(), 2, "{name}\n{src}");
        assert_eq!(src.matches("acc_2 * 0.5").count(), 1, "{name}: the plain loop's body once\n{src}");
    }
}

#[test]
fn peeled_loops_are_bitwise_equal_to_the_interpreter_on_vulkan_and_cuda() {
    let kernels = vec![peeled().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-peel-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let mut cpu = CpuBackend::new(kernels);
    let k = &m.kernels[0];
    assert_eq!(k.variants.len(), 2);
    let cases: Vec<Case> = (0..4u32)
        .map(|n| {
            Case::new(format!("n = {n}"), [3, 1, 1])
                .buffer("x", 96, Fill::Uniform { lo: -4.0, hi: 4.0 })
                .buffer("out", 96, Fill::Zeros)
                .scalar("n", Literal::U32(n))
        })
        .collect();
    let mut backends: Vec<(&str, Box<dyn onekernel_runtime::Backend>)> = Vec::new();
    if let Some(vk) = onekernel_tests::harness::vulkan_or_skip() {
        backends.push(("vulkan", Box::new(vk)));
    }
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(cuda) => backends.push(("cuda", Box::new(cuda))),
        Err(e) => eprintln!("SKIPPED on CUDA: {e}"),
    }
    for (name, be) in backends.iter_mut() {
        for v in &k.variants {
            for case in &cases {
                let verdict =
                    validate(be.as_mut(), &mut cpu, k, &dir, v, case, 7, ValidateOptions::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert!(verdict.passed, "{name} {} {}: {verdict:#?}", v.label, case.label);
            }
        }
        eprintln!("{name}: 2 variants × 4 bounds bitwise equal");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
