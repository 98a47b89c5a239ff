//! Specialization constants, variant axes, a type axis, narrow storage types, shared
//! memory and all three reductions, generated and run on Vulkan (lavapipe in CI) against
//! the interpreter, bitwise, for every variant: the plumbing the catalogue's kernels do
//! not exercise yet.

use onekernel_codegen::Builder;
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::Literal;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};

/// Mixes every storage type and spec-constant kind into one output per invocation.
#[kernel(workgroup = 64, variants(negate = [false, true], shift = [0, 3], T = [f32, f16, bf16]))]
fn variant_mix(
    #[len(num_groups().x * 64)] x: &[T],
    #[len(num_groups().x * 64)] bytes: &[u8],
    #[len(num_groups().x * 64)] signed: &[i8],
    #[len(num_groups().x * 64)] out: &mut [T],
    #[len(num_groups().x * 4)] stats: &mut [f32],
    #[len(num_groups().x)] counts: &mut [i32],
    #[push] bias: f32,
    #[spec(default = -2)] offset: i32,
    #[spec(default = 0.75)] gain: f32,
) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    let g = global_id().x;
    let v = x[g] * gain + bias + (((bytes[g] >> shift) as f32) - (signed[g] as f32)) * 0.5;
    let v = select(negate, -v, v);
    s[t] = v;
    barrier();
    let neighbour = s[(t + 1) % 64];
    let e = exp(v * 0.25) + tanh(neighbour) + sqrt(abs(v)) / 3.0;
    out[g] = e;
    let total = workgroup_sum(fma(v, v, e));
    let top = workgroup_max(neighbour);
    let low = workgroup_min(v);
    let n = workgroup_sum(select(v > 0.0, 1, offset));
    if t == 0 {
        let row = group_id().x * 4;
        stats[row] = total;
        stats[row + 1] = top;
        stats[row + 2] = low;
        stats[row + 3] = recip(total + 1.0);
        counts[group_id().x] = n;
    }
}

#[test]
fn every_variant_is_bitwise_equal_to_the_interpreter_on_vulkan() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let kernels = variant_mix().unwrap();
    let dir = std::env::temp_dir().join(format!("onekernel-variants-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let mut cpu = CpuBackend::new(kernels);
    let groups = 5u32;
    let n = 64 * groups as usize;
    let case = Case::new("5 groups", [groups, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -4.0, hi: 4.0 })
        .buffer("bytes", n, Fill::Ints { lo: 0, hi: 255 })
        .buffer("signed", n, Fill::Ints { lo: -128, hi: 127 })
        .buffer("out", n, Fill::Zeros)
        .buffer("stats", 4 * groups as usize, Fill::Zeros)
        .buffer("counts", groups as usize, Fill::Zeros)
        .scalar("bias", Literal::f32(0.125));
    let mut runs = 0;
    for k in &m.kernels {
        assert_eq!(k.variants.len(), 4, "negate × shift");
        for v in &k.variants {
            let verdict = validate(&mut vk, &mut cpu, k, &dir, v, &case, 31, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            assert!(verdict.passed, "{verdict:#?}");
            runs += 1;
        }
    }
    assert_eq!(runs, 12, "3 types × 4 variants");
    // The same on CUDA where there is a GPU (CUDA template instances, one per variant).
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(mut cuda) => {
            for k in &m.kernels {
                for v in &k.variants {
                    let verdict = validate(&mut cuda, &mut cpu, k, &dir, v, &case, 31, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
                    assert!(verdict.passed, "{verdict:#?}");
                }
            }
            eprintln!("cuda: 12 of 12 variants bitwise equal");
        }
        Err(e) => eprintln!("SKIPPED on CUDA: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
