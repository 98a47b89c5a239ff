//! Properties of decode attention on the interpreter and on lavapipe (the GPU backends
//! run the full grid with `onekernel attention-grid`, evidence in evidence/):
//! * deterministic mode is batch-invariant: a sequence's output at B = 1 equals its
//!   output inside batches of 2, 8 and 33 other-length sequences, bitwise, over the CI
//!   subset of the determinism grid (`onekernel_ops::attention::grid::ci_grid`);
//! * a paged cache with a shuffled block table (page sizes 1, 16, 64) gives the same bits
//!   as the contiguous layout, for every K/V format;
//! * two runs give the same bits;
//! * negative controls: the fast mode's work-dependent chunking is not batch-invariant,
//!   and the bit comparison catches a one-ulp change of one sequence.

use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
use onekernel_ops::attention::grid::{ci_grid, fast_chunk, run_point};
use onekernel_ops::attention::{KvFormat, Split};
use onekernel_runtime::Backend;
use onekernel_tests::harness::{cpu, gpu_backends, manifest, root};

fn shape(k: KvFormat, v: KvFormat) -> BatchShape {
    BatchShape {
        head_dim: 64,
        n_heads: 4,
        n_kv_heads: 2,
        k_format: k,
        v_format: v,
        scale: 0.125,
        softcap: 0.0,
        max_bias: 0.0,
        mask: false,
        sinks: None,
        v_head_dim: None,
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Runs the CI grid; returns each point's output hash (backends must agree).
fn grid_on(backend: &mut dyn Backend) -> Vec<String> {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut hashes = Vec::new();
    let mut controls = 0;
    let points = ci_grid();
    for pt in &points {
        let o = run_point(pt, &mut onekernel_ops::Device::new(backend, &m, &artifacts)).unwrap_or_else(|e| panic!("{pt:?}: {e}"));
        println!(
            "{}: D {} KV {} GQA {} mask {} alibi {} sinks {} {}/{}: invariant at B {:?}, repeatable {}, fast mode differs {}, NMSE {:.1e}",
            backend.name(),
            pt.head_dim,
            pt.kv,
            pt.gqa,
            pt.mask,
            pt.alibi,
            pt.sinks,
            pt.k_format.name(),
            pt.v_format.name(),
            o.invariant_batches,
            o.repeatable,
            o.fast_mode_differs,
            o.nmse
        );
        assert!(o.passed(), "{o:?}");
        controls += o.fast_mode_differs as usize;
        hashes.push(o.output_hash);
    }
    // The control must be able to fail the property the test checks.
    assert!(controls * 2 > points.len(), "the fast mode's chunking changed bits at only {controls} of {} points", points.len());
    hashes
}

#[test]
fn deterministic_mode_is_batch_invariant_over_the_ci_grid_on_every_backend() {
    let reference = grid_on(&mut cpu());
    for mut d in gpu_backends() {
        let name = d.name();
        assert_eq!(grid_on(d.as_mut()), reference, "{name}'s outputs differ from the interpreter's");
    }
}

#[test]
fn shuffled_paged_cache_equals_contiguous_bitwise() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(cpu())];
    backends.extend(gpu_backends());
    for (i, k) in KvFormat::ALL.into_iter().enumerate() {
        let v = KvFormat::ALL[(i + 2) % 5];
        let sh = shape(k, v);
        let seqs: Vec<Sequence> = [5u32, 300, 129].iter().enumerate().map(|(j, &len)| Sequence::random(&sh, 50 + j as u64, len)).collect();
        let batch: Vec<&Sequence> = seqs.iter().collect();
        for page in [1u32, 16, 64] {
            let mut reference: Option<Vec<u32>> = None;
            for be in backends.iter_mut() {
                let contiguous =
                    pack(&sh, &batch, page, None).run(Split::Deterministic, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap();
                let paged = pack(&sh, &batch, page, Some(page as u64))
                    .run(Split::Deterministic, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts))
                    .unwrap();
                assert_eq!(bits(&contiguous), bits(&paged), "{}: {}/{} page size {page}", be.name(), k.name(), v.name());
                // And every backend gives the interpreter's bits.
                match &reference {
                    None => reference = Some(bits(&paged)),
                    Some(r) => assert_eq!(&bits(&paged), r, "{}: {}/{} page size {page} differs from the interpreter", be.name(), k.name(), v.name()),
                }
            }
        }
    }
}

#[test]
fn fast_mode_chunking_is_not_batch_invariant() {
    // Negative control: the grid test would catch a batch-dependent chunking.
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut be = cpu();
    let sh = shape(KvFormat::F16, KvFormat::F16);
    let (target, long) = (Sequence::random(&sh, 1, 300), Sequence::random(&sh, 2, 4000));
    let alone = pack(&sh, &[&target], 16, None);
    let batched = pack(&sh, &[&target, &long], 16, None);
    let staged = be.info().async_copies;
    let a = alone.run(Split::Fast { chunk_tokens: fast_chunk(&alone, staged) }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
    let b =
        batched.run(Split::Fast { chunk_tokens: fast_chunk(&batched, staged) }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
    let b = &b[..a.len()];
    assert_ne!(bits(&a), bits(b), "different chunkings should round differently");
    // Both are still accurate: the difference is rounding, not a wrong result.
    let max_diff = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f32, f32::max);
    assert!(max_diff < 1e-5, "{max_diff}");
    // And deterministic mode removes the difference.
    let a = alone.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
    let b = batched.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
    assert_eq!(bits(&a), bits(&b[..a.len()]));
}

#[test]
fn malformed_problems_are_rejected_before_launch() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut be = cpu();
    let sh = shape(KvFormat::Q8_0, KvFormat::F16);
    let s = Sequence::random(&sh, 3, 40);
    let good = pack(&sh, &[&s], 16, Some(1));
    assert!(good.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).is_ok());
    let mut cases: Vec<(&str, onekernel_ops::attention::DecodeProblem)> = Vec::new();
    let mut p = good.clone();
    p.k.truncate(p.k.len() - 1);
    cases.push(("truncated K", p));
    let mut p = good.clone();
    p.block_table.as_mut().unwrap()[1] = 99;
    cases.push(("block table entry out of range", p));
    let mut p = good.clone();
    p.kv_len[0] = 1000;
    cases.push(("sequence longer than its pages", p));
    let mut p = good.clone();
    p.n_heads = 3;
    cases.push(("Hq not a multiple of Hkv", p));
    let mut p = good.clone();
    p.head_dim = 48;
    cases.push(("q8_0 with D not a multiple of 32", p));
    let mut p = good.clone();
    p.sinks = Some(vec![0.0; 3]);
    cases.push(("sinks of the wrong length", p));
    for (what, p) in cases {
        let e = p.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).expect_err(what);
        println!("{what}: {e}");
        assert!(matches!(e, onekernel_ops::attention::AttentionError::Invalid(_)), "{what}: {e}");
    }
}

#[test]
fn fast_chunks_past_256_tokens_need_a_backend_that_stages_k() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut be = cpu();
    assert!(!be.info().async_copies, "the interpreter's copies are synchronous: it runs the unstaged variant");
    let sh = shape(KvFormat::F16, KvFormat::F16);
    let s = Sequence::random(&sh, 5, 600);
    let p = pack(&sh, &[&s], 16, Some(2));
    // A batch so large that one chunk per sequence fills the device: the chunk is the
    // longest sequence, clamped to what the backend's chunk kernel takes.
    let short: Vec<Sequence> = (0..300).map(|i| Sequence::random(&sh, 10 + i, 16)).collect();
    let batch: Vec<&Sequence> = std::iter::once(&s).chain(short.iter()).collect();
    let big = pack(&sh, &batch, 16, None);
    assert_eq!(fast_chunk(&big, false), 256);
    assert_eq!(fast_chunk(&big, true), 512);
    assert!(p.run(Split::Fast { chunk_tokens: 256 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).is_ok());
    let e = p
        .run(Split::Fast { chunk_tokens: 512 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts))
        .expect_err("512-token chunks without staging");
    assert!(matches!(e, onekernel_ops::attention::AttentionError::Invalid(_)), "{e}");
    assert!(e.to_string().contains("at most 256 per workgroup"), "{e}");
    let e = p
        .run(Split::Fast { chunk_tokens: 513 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts))
        .expect_err("past the kernel's largest chunk");
    assert!(e.to_string().contains("1 … 512"), "{e}");
}

#[test]
fn one_or_two_deterministic_chunks_per_workgroup_give_the_same_bits() {
    // The runtime sizes deterministic workgroups from the work (one 128-token chunk each
    // for small launches, two otherwise), so both must give the same bits on every
    // backend: lengths around the chunk and workgroup bounds, f16 V (16-byte V loads)
    // and other formats, D from 64 to 256 (V token groups per chunk: eight at D = 64 f16,
    // two at D = 256 f16, one at D = 128 bf16), GQA, a mask.
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(cpu())];
    backends.extend(gpu_backends());
    let shapes = [
        (64, KvFormat::F16, KvFormat::F16),
        (128, KvFormat::F16, KvFormat::F16),
        (128, KvFormat::Q8_0, KvFormat::Bf16),
        (256, KvFormat::F32, KvFormat::F16),
    ];
    let mut controls = 0;
    for (d, k, v) in shapes {
        let sh = BatchShape { head_dim: d, n_heads: 8, n_kv_heads: 2, mask: true, ..shape(k, v) };
        let seqs: Vec<Sequence> =
            [1u32, 127, 128, 129, 256, 300, 520].iter().enumerate().map(|(j, &len)| Sequence::random(&sh, 90 + j as u64, len)).collect();
        let batch: Vec<&Sequence> = seqs.iter().collect();
        let p = pack(&sh, &batch, 16, Some(7));
        let mut reference: Option<Vec<u32>> = None;
        for be in backends.iter_mut() {
            let one =
                p.run(Split::DeterministicGrouped { chunks_per_group: 1 }, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap();
            let two =
                p.run(Split::DeterministicGrouped { chunks_per_group: 2 }, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap();
            assert_eq!(bits(&one), bits(&two), "{}: D {d} {}/{}", be.name(), k.name(), v.name());
            match &reference {
                None => reference = Some(bits(&one)),
                Some(r) => assert_eq!(&bits(&one), r, "{}: D {d} {}/{} differs from the interpreter", be.name(), k.name(), v.name()),
            }
        }
        // Negative control on the interpreter: chunks of 128 and of 256 tokens (the fast
        // mode's) round differently, so the comparison above can fail.
        let mut be = cpu();
        let a = p.run(Split::Fast { chunk_tokens: 128 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
        let b = p.run(Split::Fast { chunk_tokens: 256 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap();
        controls += (bits(&a) != bits(&b)) as usize;
    }
    assert!(controls > 0, "chunks of 128 and 256 tokens never rounded differently");
    for bad in [0, 3] {
        let e = pack(&shape(KvFormat::F16, KvFormat::F16), &[&Sequence::random(&shape(KvFormat::F16, KvFormat::F16), 1, 10)], 16, None)
            .run(Split::DeterministicGrouped { chunks_per_group: bad }, &mut onekernel_ops::Device::new(&mut cpu(), &m, &artifacts))
            .expect_err("chunks per workgroup");
        assert!(e.to_string().contains("1 or 2"), "{e}");
    }
    // D = 256 with q4_0 V: one V token group, so one chunk per workgroup; the runtime
    // chooses it by itself and refuses to be told otherwise.
    let sh = BatchShape { head_dim: 256, ..shape(KvFormat::F16, KvFormat::Q4_0) };
    let p = pack(&sh, &[&Sequence::random(&sh, 4, 300)], 16, None);
    assert_eq!(p.deterministic_chunks_per_group(), 1);
    let e = p
        .run(Split::DeterministicGrouped { chunks_per_group: 2 }, &mut onekernel_ops::Device::new(&mut cpu(), &m, &artifacts))
        .expect_err("pairs at one V group");
    assert!(e.to_string().contains("one V token group"), "{e}");
    let mut be = cpu();
    assert_eq!(
        bits(&p.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap()),
        bits(&p.run(Split::DeterministicGrouped { chunks_per_group: 1 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap())
    );
}

/// Deterministic mode cuts a sequence longer than its threshold into 256-token chunks,
/// one per workgroup (the runtime's threshold is 2048 tokens; this test lowers it to
/// 200 so that short sequences reach both sides): a sequence's bits do not depend on the
/// batch, which mixes both kinds, nor on how many 128-token chunks the short sequences'
/// workgroups hold, on any backend; a long sequence's output is the fast mode's at
/// 256-token chunks; and the threshold matters (the negative control: the same sequence
/// cut into 128-token chunks rounds differently).
#[test]
fn long_sequences_take_256_token_chunks_and_stay_batch_invariant() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(cpu())];
    backends.extend(gpu_backends());
    let sh = BatchShape { head_dim: 128, n_heads: 8, n_kv_heads: 2, mask: true, ..shape(KvFormat::F16, KvFormat::F16) };
    let lens = [300u32, 150, 201, 520, 1, 256, 200];
    let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(j, &len)| Sequence::random(&sh, 140 + j as u64, len)).collect();
    let batch: Vec<&Sequence> = seqs.iter().collect();
    let rule = |chunks_per_group| Split::DeterministicLongAfter { long_after: 200, chunks_per_group };
    let per_seq = sh.n_heads as usize * sh.head_dim as usize;
    let mut reference: Option<Vec<u32>> = None;
    for be in backends.iter_mut() {
        let name = be.name();
        let batched = pack(&sh, &batch, 16, Some(5));
        let all = bits(&batched.run(rule(None), &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap());
        for cpg in [Some(1), Some(2)] {
            assert_eq!(
                bits(&batched.run(rule(cpg), &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap()),
                all,
                "{name}: {cpg:?} chunks per workgroup"
            );
        }
        for (j, s) in seqs.iter().enumerate() {
            let alone = bits(&pack(&sh, &[s], 16, None).run(rule(None), &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap());
            assert_eq!(alone, all[j * per_seq..][..per_seq], "{name}: sequence of {} tokens alone and in the batch", lens[j]);
        }
        match &reference {
            None => reference = Some(all),
            Some(r) => assert_eq!(&all, r, "{name} differs from the interpreter"),
        }
    }
    // A long sequence (300 tokens) is the fast mode's 256-token chunking; cut into
    // 128-token chunks (a threshold above its length) it rounds differently.
    let mut be = cpu();
    let p = pack(&sh, &[&seqs[0]], 16, None);
    let long = bits(&p.run(rule(None), &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap());
    assert_eq!(long, bits(&p.run(Split::Fast { chunk_tokens: 256 }, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap()));
    assert_ne!(
        long,
        bits(&p.run(Split::Deterministic, &mut onekernel_ops::Device::new(&mut be, &m, &artifacts)).unwrap()),
        "128- and 256-token chunks should round differently"
    );
}

/// Deterministic launches whose sequences are all long take two 256-token chunks per
/// 512-token workgroup where the backend stages K (`long_pairs`, run by the staged fast
/// variant): the same bits as one chunk per workgroup, on the interpreter reporting
/// asynchronous copies (so that it runs the staged variants, as CUDA does) and on the
/// GPU backends. The threshold is lowered to 200 tokens so that short sequences are long;
/// the lengths give second chunks of 1 … 256 tokens and groups with fewer than eight of
/// their rows. Negative control: the same 512-token workgroups as one chunk each (the
/// fast mode) round differently.
#[test]
fn paired_long_chunks_give_the_bits_of_one_chunk_per_workgroup() {
    let (m, artifacts) = (manifest(), root().join("generated"));
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(cpu().reporting_async_copies())];
    backends.extend(gpu_backends());
    let sh = BatchShape { head_dim: 128, n_heads: 8, n_kv_heads: 2, mask: true, ..shape(KvFormat::F16, KvFormat::F16) };
    let lens = [300u32, 520, 201, 700, 257, 768];
    let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(j, &len)| Sequence::random(&sh, 170 + j as u64, len)).collect();
    let batch: Vec<&Sequence> = seqs.iter().collect();
    let rule = |chunks_per_group| Split::DeterministicLongAfter { long_after: 200, chunks_per_group: Some(chunks_per_group) };
    let p = pack(&sh, &batch, 16, Some(9));
    let mut reference: Option<Vec<u32>> = None;
    let mut paired_on = Vec::new();
    for be in backends.iter_mut() {
        let name = be.name();
        let staged = be.info().async_copies;
        assert!(!p.plan(rule(1), staged).unwrap().long_pairs);
        let one = bits(&p.run(rule(1), &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap());
        let two = bits(&p.run(rule(2), &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap());
        assert_eq!(two, one, "{name}: two long chunks per workgroup");
        if p.plan(rule(2), staged).unwrap().long_pairs {
            paired_on.push(name);
            let fast = bits(&p.run(Split::Fast { chunk_tokens: 512 }, &mut onekernel_ops::Device::new(be.as_mut(), &m, &artifacts)).unwrap());
            assert_ne!(fast, two, "{name}: 512-token chunks should round differently from two 256-token ones");
        }
        match &reference {
            None => reference = Some(one),
            Some(r) => assert_eq!(&one, r, "{name} differs from the interpreter"),
        }
    }
    assert!(paired_on.contains(&"cpu"), "the interpreter reporting asynchronous copies pairs the long chunks");
    // One short sequence in the launch: every workgroup holds one long chunk.
    let mixed = pack(&sh, &[&seqs[0], &Sequence::random(&sh, 3, 150)], 16, None);
    assert!(!mixed.plan(rule(2), true).unwrap().long_pairs);
}
