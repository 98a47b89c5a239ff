//! Decode attention on tensor cores (`Split::TensorCores`, `attn_decode_chunk_mma`, class
//! `fast`) against the independent float64 reference: f16 K/V, D = 128, GQA 1/2/4/8/16,
//! 1–3 sequences of 1–900 tokens, pages of 1/16/64 tokens, paged or contiguous, mask,
//! sinks, chunks of 64/96/256/1024 tokens, the cache cells past each sequence's end NaN.
//! The queries and the softmax numerators are rounded to f16 and the tensor cores sum in
//! their own way, so the bound is a tolerance (NMSE ≤ 2e-6, max |err| ≤ 4e-3), with a
//! negative control; each backend must also repeat its own bits, every pipeline depth
//! must give the same bits, and fixed chunks (`Split::tensor_cores_deterministic`) give a
//! sequence the same bits in any batch — also where alone it is one chunk, which the
//! chunk kernel normalizes itself, and in the batch the combine does. The kernel's
//! register tiles run on the interpreter, msl-emu, CUDA (`mma.sync`) and NVIDIA's Vulkan
//! (cooperative matrices); backends without them (lavapipe) print SKIPPED.

use onekernel_ops::attention::batch::{pack, BatchShape, SeqRng, Sequence};
use onekernel_ops::attention::problem::TENSOR_CORE_MAX_CHUNK;
use onekernel_ops::attention::reference::{compare, reference};
use onekernel_ops::attention::{AttentionError, DecodeProblem, KvFormat, Split};
use onekernel_runtime::{Backend, BackendError};
use onekernel_tests::harness::{all_backends_and_msl_emu, manifest, root};

const NMSE_BOUND: f64 = 2e-6;

/// `problem` under `split` on `backend`, or `None` after a SKIPPED line where the
/// backend cannot run the kernel; any other error fails the test (`what` says which run).
fn run_or_skip(problem: &DecodeProblem, split: Split, backend: &mut dyn Backend, what: &str) -> Option<Vec<f32>> {
    match problem.run(split, &mut onekernel_ops::Device::new(backend, &manifest(), &root().join("generated"))) {
        Ok(out) => Some(out),
        Err(AttentionError::Backend(BackendError::Unsupported { reason, .. })) => {
            println!("SKIPPED on {}: {reason}", backend.name());
            None
        }
        Err(e) => panic!("{what} on {}: {e}", backend.name()),
    }
}
const MAX_ABS_BOUND: f64 = 4e-3;

/// f16 K and V, D = 128, scale 1/√128, no softcap or ALiBi: the shapes the tensor-core
/// kernel takes, with `hq` query heads over `hkv`, the mask and the sinks given.
fn f16_shape(hq: u32, hkv: u32, mask: bool, sinks: Option<Vec<f32>>) -> BatchShape {
    BatchShape {
        head_dim: 128,
        n_heads: hq,
        n_kv_heads: hkv,
        k_format: KvFormat::F16,
        v_format: KvFormat::F16,
        scale: 1.0 / 128f32.sqrt(),
        softcap: 0.0,
        max_bias: 0.0,
        mask,
        sinks,
        v_head_dim: None,
    }
}

/// Fills every cache cell past its sequence's length with f16 NaNs (bytes 0xff), as a
/// serving engine's unwritten slots may hold: a kernel that lets one into a tile (a
/// load past the chunk's end instead of its last token repeated) gives NaN.
fn poison_unused_cells(problem: &mut DecodeProblem) {
    let (p, pps) = (problem.page_size as usize, problem.pages_per_seq as usize);
    let row = 2 * 128 * problem.n_kv_heads as usize;
    for (s, &len) in problem.kv_len.clone().iter().enumerate() {
        for t in len as usize..pps * p {
            let logical = s * pps + t / p;
            let page = problem.block_table.as_ref().map_or(logical, |bt| bt[logical] as usize);
            let cell = page * p + t % p;
            problem.k[cell * row..][..row].fill(0xff);
            problem.v[cell * row..][..row].fill(0xff);
        }
    }
}

#[test]
fn tensor_core_decode_is_within_tolerance_of_the_f64_reference_and_repeats_its_bits() {
    let manifest = manifest();
    let generated = root().join("generated");
    let mut backends = all_backends_and_msl_emu();
    let mut ran = vec![0usize; backends.len()];
    for seed in 0..8u64 {
        let mut r = SeqRng::new(0x7c0_0000 + seed);
        let hkv = 1 + r.below(2);
        let hq = hkv * [1u32, 2, 4, 8, 16][r.below(5) as usize];
        let b = 1 + r.below(3) as usize;
        let p = [1u32, 16, 64][r.below(3) as usize];
        let paged = r.below(2) == 1;
        let chunk_tokens = [64u32, 96, 256, 1024][r.below(4) as usize];
        let stages = [1u32, 3][(seed % 2) as usize];
        let mask = r.below(2) == 1;
        let shape = f16_shape(hq, hkv, mask, (r.below(2) == 1).then(|| (0..hq).map(|_| r.range(-2.0, 2.0) as f32).collect()));
        let seqs: Vec<Sequence> = (0..b).map(|i| Sequence::random(&shape, seed * 100 + i as u64, 1 + r.below(900))).collect();
        let mut problem = pack(&shape, &seqs.iter().collect::<Vec<_>>(), p, paged.then_some(seed));
        poison_unused_cells(&mut problem);
        let want = reference(&problem);
        let split = Split::TensorCores { chunk_tokens, stages };
        for (i, backend) in backends.iter_mut().enumerate() {
            let name = backend.name();
            let Some(out) = run_or_skip(&problem, split, backend.as_mut(), &format!("seed {seed}")) else { continue };
            let again = problem
                .run(split, &mut onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated))
                .unwrap_or_else(|e| panic!("seed {seed} on {name}: {e}"));
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&out), bits(&again), "seed {seed}: two runs on {name} differ");
            // The pipeline's depth (one, two or three 64-token buffers) leaves the bits as
            // they are.
            for other in [1u32, 2, 3].into_iter().filter(|&s| s != stages) {
                let o = run_or_skip(
                    &problem,
                    Split::TensorCores { chunk_tokens, stages: other },
                    backend.as_mut(),
                    &format!("seed {seed}, {other} stages"),
                );
                if let Some(o) = o {
                    assert_eq!(bits(&o), bits(&out), "seed {seed} on {name}: {stages} and {other} stages differ");
                }
            }
            let (nmse, max_abs) = compare(&out, &want);
            println!(
                "seed {seed} on {name}: Hq {hq} Hkv {hkv} B {b} P {p} lens {:?} paged {paged} chunks {chunk_tokens} stages {stages} mask {} sinks {}: NMSE {nmse:.2e}, max |err| {max_abs:.2e}",
                problem.kv_len,
                shape.mask,
                shape.sinks.is_some()
            );
            assert!(nmse <= NMSE_BOUND && max_abs <= MAX_ABS_BOUND, "seed {seed} on {name}: NMSE {nmse:.2e}, max |err| {max_abs:.2e}");
            // Negative control: the bound notices attention over a wrong scale.
            let mut wrong = problem.clone();
            wrong.scale *= 1.1;
            let (bad, _) = compare(
                &wrong
                    .run(split, &mut onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated))
                    .unwrap_or_else(|e| panic!("seed {seed} on {name}: {e}")),
                &want,
            );
            assert!(bad > NMSE_BOUND, "seed {seed} on {name}: a 10 % wrong scale stays within the bound (NMSE {bad:.2e})");
            ran[i] += 1;
        }
    }
    assert_eq!(ran[0], 8, "the interpreter runs every problem");
}

#[test]
fn tensor_core_decode_rejects_what_its_kernel_cannot_take() {
    let base = BatchShape { scale: 0.1, ..f16_shape(8, 2, false, None) };
    let problem = |shape: &BatchShape| {
        let s = Sequence::random(shape, 1, 40);
        pack(shape, &[&s], 16, None)
    };
    assert!(problem(&base).check_tensor_cores().is_ok());
    let cases = [
        (BatchShape { k_format: KvFormat::Q8_0, ..base.clone() }, "q8_0 K"),
        (BatchShape { head_dim: 64, ..base.clone() }, "D = 64"),
        (BatchShape { n_heads: 64, n_kv_heads: 2, ..base.clone() }, "32 query heads per KV head"),
        (BatchShape { softcap: 30.0, ..base.clone() }, "softcap"),
    ];
    for (shape, what) in cases {
        let err = problem(&shape).check_tensor_cores().expect_err(what).to_string();
        assert!(err.contains(what) && err.contains("attn_decode_chunk_mma"), "{what}: {err}");
    }
    let long = Split::TensorCores { chunk_tokens: TENSOR_CORE_MAX_CHUNK, stages: 2 };
    assert!(problem(&base).split_tokens(long, true).is_ok());
    let err = problem(&base)
        .split_tokens(Split::TensorCores { chunk_tokens: TENSOR_CORE_MAX_CHUNK + 1, stages: 2 }, true)
        .expect_err("a chunk too long")
        .to_string();
    assert!(err.contains(&format!("1 … {TENSOR_CORE_MAX_CHUNK}")), "{err}");
    for stages in [0, 4] {
        let err = problem(&base).split_tokens(Split::TensorCores { chunk_tokens: 64, stages }, true).expect_err("stages").to_string();
        assert!(err.contains("1, 2 or 3"), "{err}");
    }
    let mut cpu = onekernel_tests::harness::cpu();
    let err = problem(&BatchShape { k_format: KvFormat::Q8_0, ..base.clone() })
        .run(Split::TensorCores { chunk_tokens: 64, stages: 2 }, &mut onekernel_ops::Device::new(&mut cpu, &manifest(), &root().join("generated")))
        .expect_err("q8_0 K");
    assert!(matches!(err, AttentionError::Invalid(_)), "{err}");
}

#[test]
fn fixed_tensor_core_chunks_are_batch_invariant_and_other_chunks_are_not() {
    let manifest = manifest();
    let generated = root().join("generated");
    let mut backends = all_backends_and_msl_emu();
    let shape = f16_shape(8, 2, false, Some(vec![0.5, -1.0, 0.0, 1.5, -0.5, 2.0, -2.0, 1.0]));
    let others: Vec<Sequence> = (0..7u64).map(|i| Sequence::random(&shape, 100 + i, 50 + 130 * i as u32)).collect();
    let head = (shape.n_heads * shape.head_dim) as usize;
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    // A target of three chunks, and one of a single chunk: alone, its launch has one
    // chunk per sequence and the chunk kernel normalizes it (`finish`); in a batch with
    // longer sequences the combine does, and the bits must be the same.
    for target in [Sequence::random(&shape, 7, 700), Sequence::random(&shape, 8, 200)] {
        // The target alone, then in the middle of batches of 3 and 8 in shuffled pages.
        let batch = |size: usize, seed: u64| {
            let mut seqs: Vec<&Sequence> = others.iter().take(size - 1).collect();
            seqs.insert((size - 1) / 2, &target);
            (pack(&shape, &seqs, 16, Some(seed)), (size - 1) / 2)
        };
        let alone = pack(&shape, &[&target], 16, None);
        for backend in backends.iter_mut() {
            let name = backend.name();
            let det = Split::tensor_cores_deterministic();
            let Some(one) = run_or_skip(&alone, det, backend.as_mut(), "alone") else { continue };
            for (size, seed) in [(3usize, 11u64), (8, 12)] {
                let (p, at) = batch(size, seed);
                let out =
                    p.run(det, &mut onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated)).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(
                    bits(&out[at * head..][..head]),
                    bits(&one),
                    "{name}: the target's ({} tokens) bits differ in a batch of {size}",
                    target.len
                );
                assert_eq!(
                    bits(&p.run(det, &mut onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated)).unwrap()),
                    bits(&out),
                    "{name}: two runs differ"
                );
            }
            // Negative control: chunks that follow the batch (the scheduler's for a batch
            // of 8 sequences on a device it fills with 64-token chunks) change the bits.
            let (p, at) = batch(8, 12);
            let batched = p
                .run(Split::TensorCores { chunk_tokens: 64, stages: 3 }, &mut onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated))
                .unwrap();
            assert_ne!(bits(&batched[at * head..][..head]), bits(&one), "{name}: other chunks should change the bits");
            println!(
                "{name}: fixed {}-token chunks batch-invariant for a target of {} tokens (B = 1, 3, 8); 64-token chunks change its bits",
                onekernel_ops::attention::problem::TENSOR_CORE_DETERMINISTIC_CHUNK,
                target.len,
            );
        }
    }
}

/// With two to four chunks per sequence the chunk kernel's last workgroup of each
/// sequence and KV head can merge them (`last_arrival`, one launch; `run` does where it
/// is faster); the bits are the combine's, on every backend. Sequences of one chunk (one token, too) and of several share a launch; with and
/// without sinks; the arrival counters are reused by the second run. Negative control:
/// another chunk length changes the bits, so the comparison can fail.
#[test]
fn merging_in_the_chunk_kernel_gives_the_combines_bits() {
    let manifest = manifest();
    let generated = root().join("generated");
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut backends = all_backends_and_msl_emu();
    for (seed, lens, chunk_tokens, sinks) in
        [(1u64, vec![130u32, 40, 256], 64u32, false), (2, vec![1, 190, 64], 64, true), (3, vec![700, 5], 256, true), (4, vec![1000], 256, false)]
    {
        let mut r = SeqRng::new(0x3e4_0000 + seed);
        let (hq, hkv) = (8u32, 2u32);
        let shape = f16_shape(hq, hkv, false, sinks.then(|| (0..hq).map(|_| r.range(-2.0, 2.0) as f32).collect()));
        let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(i, &l)| Sequence::random(&shape, seed * 10 + i as u64, l)).collect();
        let problem = pack(&shape, &seqs.iter().collect::<Vec<_>>(), 16, Some(seed));
        let chunks = lens.iter().map(|l| l.div_ceil(chunk_tokens)).max().unwrap_or(1);
        assert!((2..=onekernel_ops::attention::problem::TENSOR_CORE_MERGE_CHUNKS).contains(&chunks), "seed {seed}: {chunks} chunks");
        let split = Split::TensorCores { chunk_tokens, stages: 2 };
        for backend in backends.iter_mut() {
            let name = backend.name();
            let mut dev = onekernel_ops::Device::new(backend.as_mut(), &manifest, &generated);
            let merged = match problem.run_merging(split, &mut dev, true) {
                Ok(out) => out,
                Err(AttentionError::Backend(BackendError::Unsupported { reason, .. })) => {
                    println!("SKIPPED on {name}: {reason}");
                    continue;
                }
                Err(e) => panic!("seed {seed} on {name}: {e}"),
            };
            let combined = problem.run_merging(split, &mut dev, false).unwrap_or_else(|e| panic!("seed {seed} on {name}: {e}"));
            assert_eq!(bits(&merged), bits(&combined), "seed {seed} on {name}: the merge's bits are not the combine's");
            assert_eq!(
                bits(&problem.run_merging(split, &mut dev, true).unwrap()),
                bits(&merged),
                "seed {seed} on {name}: a second merged run differs"
            );
            let other = problem.run_merging(Split::TensorCores { chunk_tokens: chunk_tokens + 32, stages: 2 }, &mut dev, true).unwrap();
            assert_ne!(bits(&other), bits(&merged), "seed {seed} on {name}: another chunk length should change the bits");
            println!("seed {seed} on {name}: lengths {lens:?}, {chunks} chunks of {chunk_tokens}, sinks {sinks}: merged in the chunk kernel = chunk + combine, bit for bit");
        }
    }
}
