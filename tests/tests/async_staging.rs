//! The decode-attention chunk kernel's two K-staging variants (`async_k`: tiles copied
//! with `async_copy` into two buffers, or staged through registers) give the same bits
//! on the reference interpreter, which also checks the asynchronous protocol (no access
//! to a tile before its wait, a barrier before other invocations read it), wherever both
//! take the same chunks: fast chunks of more than 256 tokens are the staged variant's
//! alone (the other holds 256 tokens per workgroup). CI's lavapipe cannot run the
//! `async_k` variant (52 KiB of shared memory in fast mode, 47 KiB in deterministic
//! mode, 32 KiB offered), so this is where CI
//! exercises it; the GPU machine validates it on CUDA.

use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::Literal;
use onekernel_runtime::args::ArgValue;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::inputs;
use onekernel_runtime::{Backend, Launch};
use std::path::PathBuf;

#[test]
fn async_and_register_k_staging_give_the_same_bits_on_the_interpreter() {
    let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
    let m: Manifest = serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap();
    let k = m.kernel("attn_decode_chunk").unwrap();
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let cases = onekernel_kernels::cases::validation_cases("attn_decode_chunk").unwrap();
    let (mut compared, mut own_chunks) = (0, 0);
    // (`long_pairs` variants chunk differently from their unstaged twins: tests/attention_invariance.rs.)
    let axis = |v: &onekernel_dsl::manifest::VariantEntry, name: &str, want: bool| v.spec.iter().any(|(n, x)| n == name && *x == Literal::Bool(want));
    for v in k.variants.iter().filter(|v| axis(v, "async_k", true) && axis(v, "long_pairs", false)) {
        let twin = k
            .variants
            .iter()
            .find(|w| {
                w.spec.iter().all(|(n, x)| if n == "async_k" { *x == Literal::Bool(false) } else { v.spec.iter().any(|(m, y)| m == n && y == x) })
            })
            .unwrap();
        assert!(v.shared_bytes > twin.shared_bytes, "{}: two K buffers", v.label);
        for (i, case) in cases.iter().enumerate() {
            let args = inputs(k, case, 77 + i as u64).unwrap();
            let deterministic = v.spec.iter().any(|(n, x)| n == "deterministic" && *x == Literal::Bool(true));
            if !deterministic && matches!(args.get("chunk_tokens"), Some(ArgValue::Scalar(Literal::U32(t))) if *t > 256) {
                own_chunks += 1;
                continue;
            }
            let run = |cpu: &mut CpuBackend, spec| {
                let mut a = args.clone();
                cpu.launch(&Launch { kernel: k, artifacts: &generated, spec, groups: case.groups }, &mut a)
                    .unwrap_or_else(|e| panic!("{} {}: {e}", v.label, case.label));
                ["part_m", "part_l", "part_acc"].map(|b| a.get_buffer(b).unwrap().to_bits())
            };
            let (fast, staged) = (run(&mut cpu, &v.spec), run(&mut cpu, &twin.spec));
            assert!(fast == staged, "{} vs {}, case {}: outputs differ", v.label, twin.label, case.label);
            assert!(fast[2].iter().any(|&x| x != 0), "case {} produced output", case.label);
            compared += 1;
        }
    }
    assert_eq!(compared, 38, "4 async variants without long_pairs × 11 cases (256-token workgroups with two deterministic chunks each; 512-token workgroups; deterministic 256-token chunks past a length), less the fast variants' six 512-token runs");
    assert_eq!(own_chunks, 6, "the fast variants' 512-token cases are the staged variant's alone");
}
