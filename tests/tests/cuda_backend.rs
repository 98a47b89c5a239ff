//! Every catalogue kernel, variant and case on CUDA against the reference interpreter,
//! bitwise. CI has no GPU: there the backend reports itself unavailable (without a
//! panic) and the test says it skipped. On the GPU machine the same comparison runs
//! through `scripts/gpu-evidence.sh` (evidence in `evidence/`).

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::cuda::Cuda;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::BackendError;

/// The CUDA backend, or `None` (with a SKIPPED line) where there is no NVIDIA GPU; a
/// CUDA that is present but fails is a test failure.
fn cuda() -> Option<Cuda> {
    match Cuda::new() {
        Ok(c) => Some(c),
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED (no NVIDIA GPU here): {e}");
            None
        }
        Err(e) => panic!("CUDA present but failing: {e}"),
    }
}

#[test]
fn every_kernel_variant_and_case_is_bitwise_equal_to_the_interpreter_on_cuda() {
    let Some(mut cuda) = cuda() else { return };
    let dir = onekernel_tests::harness::root().join("generated");
    let m: Manifest = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    for k in &m.kernels {
        for v in &k.variants {
            for (i, case) in onekernel_kernels::cases::validation_cases(&k.name).unwrap().iter().enumerate() {
                let verdict = validate(&mut cuda, &mut cpu, k, &dir, v, case, 1000 + i as u64, ValidateOptions::default()).unwrap();
                assert!(verdict.passed, "{verdict:#?}");
            }
        }
    }
}

/// Spec values outside the manifest's variants (here head_dim 64 and 256; the variants
/// instantiate the default 128) are instantiated at run time and give the interpreter's
/// bits.
#[test]
fn spec_values_outside_the_variants_are_instantiated_at_run_time() {
    use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
    use onekernel_ops::attention::{KvFormat, Split};
    let Some(mut cuda) = cuda() else { return };
    let dir = onekernel_tests::harness::root().join("generated");
    let m: Manifest = serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    for d in [64u32, 256] {
        let shape = BatchShape {
            head_dim: d,
            n_heads: 4,
            n_kv_heads: 2,
            k_format: KvFormat::F16,
            v_format: KvFormat::Q8_0,
            scale: 0.1,
            softcap: 0.0,
            max_bias: 0.0,
            mask: false,
            sinks: None,
            v_head_dim: None,
        };
        let s = Sequence::random(&shape, d as u64, 300);
        let p = pack(&shape, &[&s], 16, Some(3));
        let a = p.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut cuda, &m, &dir)).unwrap();
        let b = p.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut cpu, &m, &dir)).unwrap();
        assert_eq!(a.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), b.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), "D {d}");
    }
}
