//! `fast_exp` generated for every backend and run on Vulkan (lavapipe in CI; CUDA where
//! there is a GPU) against the interpreter's e^x (f64 rounded to f32). The hardware
//! approximations are not bitwise, so the check is the one their specifications give:
//! Vulkan's `exp` within 3 + 2·|x| ULP, CUDA's `ex2.approx.ftz` of x·log2 e (what `__expf`
//! computes, without its range test for results below 2^-126) within 2 + 1.173·|x| (both
//! ≤ 19 ULP for |x| ≤ 8). Negative control: against a reference computing e^(x + 0.001) the
//! same bound fails (about 10⁴ ULP), while the `fast` class's NMSE bound alone would
//! still pass it — which is why the bound here is per element. `fast_exp2` likewise:
//! Vulkan's `exp2` within 3 + 2·|x| ULP, CUDA's `ex2.approx.ftz` within 2 ULP (its
//! specification's maximum relative error, 2^-22.5), negative control 2^(x + 0.001).

use onekernel_codegen::Builder;
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::backend::Backend;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions, Verdict};

/// The kernel under test.
mod plain {
    use onekernel_macros::kernel;

    /// y = e^x by the backend's approximation.
    #[kernel(workgroup = 64, fast)]
    pub fn fexp(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let g = global_id().x;
        y[g] = fast_exp(x[g]);
    }
}

/// The negative control's reference: the same name and signature, e^(x + 0.001).
mod shifted {
    use onekernel_macros::kernel;

    /// y = e^(x + 0.001).
    #[kernel(workgroup = 64, fast)]
    pub fn fexp(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let g = global_id().x;
        y[g] = fast_exp(x[g] + 0.001);
    }
}

/// `fast_exp2`, and its negative control's reference.
mod plain2 {
    use onekernel_macros::kernel;

    /// y = 2^x by the backend's approximation.
    #[kernel(workgroup = 64, fast)]
    pub fn fexp(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let g = global_id().x;
        y[g] = fast_exp2(x[g]);
    }
}

mod shifted2 {
    use onekernel_macros::kernel;

    /// y = 2^(x + 0.001).
    #[kernel(workgroup = 64, fast)]
    pub fn fexp(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let g = global_id().x;
        y[g] = fast_exp2(x[g] + 0.001);
    }
}

/// The specifications' bound for |x| ≤ 8, in ULP.
const MAX_ULP: f64 = 19.0;

fn run(backend: &mut dyn Backend, reference: &mut CpuBackend, m: &Manifest, dir: &std::path::Path) -> Verdict {
    let groups = 16u32;
    let case = Case::new("x in [-8, 8]", [groups, 1, 1]).buffer("x", 64 * groups as usize, Fill::Uniform { lo: -8.0, hi: 8.0 }).buffer(
        "y",
        64 * groups as usize,
        Fill::Zeros,
    );
    let k = &m.kernels[0];
    validate(backend, reference, k, dir, &k.variants[0], &case, 11, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn fast_exp_prints_each_backends_approximation_and_stays_within_its_ulp_bound() {
    let kernels = vec![plain::fexp().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-fast-exp-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let text = |p: &str| String::from_utf8(g.files[p].clone()).unwrap();
    let cuda = text("cuda/fexp.cu");
    assert!(cuda.contains("ok_fast_exp(") && cuda.contains("ex2.approx.ftz.f32"), "CUDA prints ex2.approx.ftz");
    assert!(text("vulkan/fexp.comp").contains(" exp("), "GLSL prints exp");
    assert!(text("metal/fexp.metal").contains("fast::exp("), "MSL prints fast::exp");
    assert!(!cuda.contains("ok_exp("), "not the portable routine");
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let v = run(&mut vk, &mut CpuBackend::new(kernels.clone()), &m, &dir);
    assert!(v.passed && v.max_ulp <= MAX_ULP, "vulkan: {v:#?}");
    eprintln!("vulkan: fast_exp within {} ULP of e^x (NMSE {:.2e})", v.max_ulp, v.nmse);
    // Negative control: a reference off by 0.001 in x passes the class's NMSE bound but
    // not the per-element one.
    let bad = run(&mut vk, &mut CpuBackend::new(vec![shifted::fexp().unwrap()]), &m, &dir);
    assert!(bad.max_ulp > 1000.0, "the shifted reference is not seen: {bad:#?}");
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(mut cuda) => {
            let v = run(&mut cuda, &mut CpuBackend::new(kernels), &m, &dir);
            assert!(v.passed && v.max_ulp <= MAX_ULP, "cuda: {v:#?}");
            eprintln!("cuda: fast_exp within {} ULP of e^x", v.max_ulp);
        }
        Err(e) => eprintln!("SKIPPED on CUDA: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn fast_exp2_prints_each_backends_approximation_and_stays_within_its_ulp_bound() {
    let kernels = vec![plain2::fexp().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-fast-exp2-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let text = |p: &str| String::from_utf8(g.files[p].clone()).unwrap();
    let cuda = text("cuda/fexp.cu");
    assert!(cuda.contains("ok_fast_exp2(") && cuda.contains("ex2.approx.ftz.f32"), "CUDA prints ex2.approx.ftz");
    assert!(text("vulkan/fexp.comp").contains(" exp2("), "GLSL prints exp2");
    assert!(text("metal/fexp.metal").contains("fast::exp2("), "MSL prints fast::exp2");
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let v = run(&mut vk, &mut CpuBackend::new(kernels.clone()), &m, &dir);
    assert!(v.passed && v.max_ulp <= MAX_ULP, "vulkan: {v:#?}");
    eprintln!("vulkan: fast_exp2 within {} ULP of 2^x (NMSE {:.2e})", v.max_ulp, v.nmse);
    let bad = run(&mut vk, &mut CpuBackend::new(vec![shifted2::fexp().unwrap()]), &m, &dir);
    assert!(bad.max_ulp > 1000.0, "the shifted reference is not seen: {bad:#?}");
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(mut cuda) => {
            let v = run(&mut cuda, &mut CpuBackend::new(kernels), &m, &dir);
            assert!(v.passed && v.max_ulp <= 2.0, "cuda: {v:#?}");
            eprintln!("cuda: fast_exp2 within {} ULP of 2^x", v.max_ulp);
        }
        Err(e) => eprintln!("SKIPPED on CUDA: {e}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
