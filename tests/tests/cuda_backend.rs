//! Every catalogue kernel, variant and case on CUDA against the reference interpreter,
//! bitwise. CI has no GPU: there the backend reports itself unavailable (without a
//! panic) and the test says it skipped. On the GPU machine the same comparison runs
//! through `scripts/gpu-validate.sh` (evidence in `generated/evidence/`).

use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::cuda::Cuda;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::BackendError;
use std::path::PathBuf;

#[test]
fn every_kernel_variant_and_case_is_bitwise_equal_to_the_interpreter_on_cuda() {
    let mut cuda = match Cuda::new() {
        Ok(c) => c,
        Err(e @ BackendError::Unavailable { .. }) => {
            eprintln!("SKIPPED (no NVIDIA GPU here): {e}");
            return;
        }
        Err(e) => panic!("CUDA present but failing: {e}"),
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
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
