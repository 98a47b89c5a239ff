//! A kernel whose DSL source is wrong — here a shared-memory read of another invocation's
//! write with no barrier between — fails validation as a fault of the reference
//! interpreter, named as such with the source line, and does not stop the validator: the
//! next kernel is validated as usual (the negative control: the same kernel with the
//! barrier passes).

use onekernel_codegen::Builder;
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};

mod racy {
    use onekernel_macros::kernel;

    /// Rotates and reverses each workgroup's values through shared memory, without the
    /// barrier. (Storing at `(t + 1) % 64`, not at `t`, is beyond the compile-time
    /// missing-barrier check, which decides only own-element stores: the interpreter
    /// finds it at run time.)
    #[kernel(workgroup = 64)]
    pub fn reverse(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let s = shared::<f32, 64>();
        let t = local_id().x;
        s[(t + 1) % 64] = x[global_id().x];
        y[global_id().x] = s[63 - t];
    }
}

mod fenced {
    use onekernel_macros::kernel;

    /// Rotates and reverses each workgroup's values through shared memory.
    #[kernel(workgroup = 64)]
    pub fn reverse(#[len(num_groups().x * 64)] x: &[f32], #[len(num_groups().x * 64)] y: &mut [f32]) {
        let s = shared::<f32, 64>();
        let t = local_id().x;
        s[(t + 1) % 64] = x[global_id().x];
        barrier();
        y[global_id().x] = s[63 - t];
    }
}

#[test]
fn a_race_in_the_source_fails_its_case_as_the_references_fault_and_validation_goes_on() {
    let case = Case::new("4 workgroups", [4, 1, 1]).buffer("x", 256, Fill::Uniform { lo: -1.0, hi: 1.0 }).buffer("y", 256, Fill::Zeros);
    let mut results = Vec::new();
    for (tag, kernel) in [("racy", racy::reverse().unwrap()), ("fenced", fenced::reverse().unwrap())] {
        let dir = std::env::temp_dir().join(format!("onekernel-reference-fault-{tag}-{}", std::process::id()));
        let g = Builder::new().kernels(vec![kernel.clone()]).out_dir(&dir).write().unwrap();
        let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
        let k = &m.kernels[0];
        // The device under test is a second interpreter: the reference's fault is what
        // is checked, and it must come before any device runs.
        let mut device = CpuBackend::new(vec![kernel.clone()]);
        let mut reference = CpuBackend::new(vec![kernel]);
        let v = validate(&mut device, &mut reference, k, &dir, &k.variants[0], &case, 3, ValidateOptions::default())
            .unwrap_or_else(|e| panic!("{tag}: a fault of the source must be a failed verdict, not an error: {e}"));
        println!("{tag}: passed {}, fault {:?}", v.passed, v.reference_fault);
        results.push(v);
        let _ = std::fs::remove_dir_all(dir);
    }
    let fault = results[0].reference_fault.as_deref().expect("the racy kernel's case records the fault");
    assert!(!results[0].passed);
    assert!(fault.starts_with("the reference interpreter (cpu) faulted"), "{fault}");
    assert!(fault.contains("race") && fault.contains("reference_faults.rs:"), "names the race and the source line: {fault}");
    assert!(results[1].passed && results[1].reference_fault.is_none(), "{:#?}", results[1]);
}
