//! Decode attention on `attn_decode_wide`: FP8 and mixed FP8/bf16 rows, head dims 512,
//! K/V rows of 576/512 (MLA) with many query heads over one KV head. Against the external
//! `attention-fp8` fixtures and the float64 reference (NMSE ≤ 1e-6, cosine ≥ 0.99999),
//! bitwise equal on every backend present, batch-invariant in deterministic mode; the
//! FP8 encoder kernel bit for bit the host's; each with its negative control.

use onekernel_ops::attention::batch::{pack, BatchShape, SeqRng, Sequence};
use onekernel_ops::attention::reference::{compare, reference};
use onekernel_ops::attention::{AttentionError, DecodeProblem, KvFormat, Split};
use onekernel_ops::fixture::{cosine, run_attention};
use onekernel_ops::CallError;
use onekernel_tests::bits;
use onekernel_tests::harness::{check_attention_fixture, cpu, fixture_json, manifest, on_every_backend, root};
use serde_json::Value;

fn fixture(name: &str) -> Value {
    fixture_json("attention-fp8", name)
}

fn check(name: &str) {
    for r in check_attention_fixture("attention-fp8", name) {
        assert!(r.cosine_bound.is_some(), "{name} states a cosine bound");
    }
}

#[test]
fn fp8_rows_paged_gqa_d128_match_the_f64_reference() {
    check("fp8_d128_paged16.json");
}

#[test]
fn mixed_rows_d512_mqa_with_sinks_match_the_f64_reference() {
    check("mixed448_d512_mqa_sinks.json");
}

/// The seed's bug: a mixed row read with its parts in the other order (the bf16 rotary
/// dimensions first). Rewriting the fixture's V rows that way and running them through the
/// correct kernel is what a writer with the swapped layout produces: the fixture's
/// bounds must reject it.
#[test]
fn a_swapped_mixed_v_layout_fails_the_fixture() {
    let mut fx = fixture("mixed448_d512_mqa_sinks.json");
    let (d, f8) = (512usize, 448usize);
    let row = 4 + f8 + 2 * (d - f8);
    let v: Vec<u8> = fx["v"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u8).collect();
    let swapped: Vec<u8> = v
        .chunks(row)
        .flat_map(|r| {
            let mut o = r[..4].to_vec();
            o.extend(&r[4 + f8..]);
            o.extend(&r[4..4 + f8]);
            o
        })
        .collect();
    fx["v"] = serde_json::json!(swapped);
    let r = run_attention(&fx, &mut onekernel_ops::Device::new(&mut cpu(), &manifest(), &root().join("generated"))).unwrap();
    println!("swapped V layout: NMSE {:.3e}, cosine {:.6}", r.nmse, r.cosine.unwrap());
    // Bytes of bf16 read as E4M3 include the NaN code: NaN or a large error, never a pass.
    assert!(!r.passed && (r.nmse.is_nan() || r.nmse > 1e-2), "{r:?}");
}

/// A wide shape: K rows of `d`, V rows of `dv`, `hq` heads over `hkv`.
fn shape(d: u32, dv: u32, hq: u32, hkv: u32, k: KvFormat, v: KvFormat) -> BatchShape {
    BatchShape { v_head_dim: (dv != d).then_some(dv), ..BatchShape::new(d, hq, hkv, k, v) }
}

/// Random wide problems (every FP8 layout, D 512, MLA 576/512, head blocks of 16 and
/// partial ones, options) on every backend: bitwise equal to the interpreter, within
/// NMSE 1e-6 and cosine 0.99999 of float64, in deterministic and fast splits.
#[test]
fn random_wide_problems_match_the_f64_reference_bitwise_on_every_backend() {
    let mixed = |f| KvFormat::Fp8Mixed { fp8_dims: f };
    let cases = [
        (shape(512, 512, 16, 1, KvFormat::Fp8E4m3, KvFormat::Fp8E4m3), "fp8 D 512 MQA 16"),
        (shape(576, 512, 20, 1, mixed(512), mixed(448)), "MLA 576/512 mixed, 20 heads"),
        (shape(512, 512, 8, 2, mixed(448), KvFormat::Bf16), "mixed K, bf16 V, GQA 4"),
        (shape(128, 128, 8, 2, KvFormat::F16, KvFormat::Fp8E4m3), "f16 K, fp8 V, D 128"),
        (shape(576, 512, 4, 1, KvFormat::Q8_0, KvFormat::F32), "q8_0 K 576, f32 V 512"),
    ];
    for (i, (sh, what)) in cases.into_iter().enumerate() {
        let mut r = SeqRng::new(0x31de + i as u64);
        let mut sh = sh;
        sh.softcap = if i == 1 { 30.0 } else { 0.0 };
        sh.max_bias = if i == 2 { 8.0 } else { 0.0 };
        sh.mask = i >= 2;
        sh.sinks = (i % 2 == 1).then(|| (0..sh.n_heads).map(|_| r.range(-2.0, 2.0) as f32).collect());
        let seqs: Vec<Sequence> = (0..2).map(|j| Sequence::random(&sh, i as u64 * 10 + j, 1 + r.below(330))).collect();
        let problem = pack(&sh, &seqs.iter().collect::<Vec<_>>(), 16, (i % 2 == 0).then_some(i as u64));
        assert!(problem.uses_wide(), "{what}");
        let want = reference(&problem);
        for split in [Split::Deterministic, Split::Fast { chunk_tokens: 200 }] {
            let out = on_every_backend(what, |dev| bits(&problem.run(split, dev).unwrap_or_else(|e| panic!("{what}: {e}"))));
            let out: Vec<f32> = out.into_iter().map(f32::from_bits).collect();
            let (nmse, max_abs) = compare(&out, &want);
            let cos = cosine(&out, &want);
            println!("{what} {split:?} lens {:?}: NMSE {nmse:.2e}, max |err| {max_abs:.2e}, cosine {cos:.9}", problem.kv_len);
            assert!(nmse <= 1e-6 && max_abs <= 2e-3 && cos >= 0.99999, "{what} {split:?}: NMSE {nmse}, max {max_abs}, cosine {cos}");
        }
    }
}

/// Deterministic mode: a sequence's bits do not depend on the batch it is in or on the
/// page layout; the fast split with other chunks changes them (the control that the
/// comparison sees chunking at all).
#[test]
fn deterministic_wide_decode_is_batch_invariant() {
    let sh = shape(576, 512, 32, 1, KvFormat::Fp8Mixed { fp8_dims: 512 }, KvFormat::Fp8Mixed { fp8_dims: 448 });
    let lens = [700u32, 3, 150, 260];
    let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(i, &l)| Sequence::random(&sh, 900 + i as u64, l)).collect();
    let alone = pack(&sh, &[&seqs[0]], 16, None);
    let batch = pack(&sh, &seqs.iter().collect::<Vec<_>>(), 16, Some(5));
    let rows = (sh.n_heads * 512) as usize;
    let (one, many, fast) = on_every_backend("wide decode, alone and in a batch", |dev| {
        (
            bits(&alone.run(Split::Deterministic, dev).unwrap()),
            bits(&batch.run(Split::Deterministic, dev).unwrap()),
            bits(&alone.run(Split::Fast { chunk_tokens: 96 }, dev).unwrap()),
        )
    });
    assert_eq!(one, many[..rows], "sequence 0 alone and in a paged batch of four");
    assert_ne!(one, fast, "96-token chunks give other bits than the deterministic 128-token ones");
    let fast: Vec<f32> = fast.into_iter().map(f32::from_bits).collect();
    let (nmse, _) = compare(&fast, &reference(&alone));
    assert!(nmse <= 1e-6, "the fast split is still within the bound: {nmse}");
}

/// `kv_fp8_encode` on every backend equals the host encoder byte for byte, on rows with
/// ties, saturation, zeros and an all-zero row.
#[test]
fn the_fp8_encoder_kernel_is_the_host_encoder() {
    let dim = 64usize;
    let mut x: Vec<f32> = onekernel_tests::uniform(77, 5 * dim, -3.0, 3.0);
    // Row 1: amax 448 (scale 1): halfway cases that round to even, both ways.
    for (i, v) in [1.0625f32, 1.1875, -1.0625, 0.0, -0.0, 448.0, 0.001953125 * 1.5].into_iter().enumerate() {
        x[dim + i] = v;
    }
    // Row 2: all zero (scale 0, zero codes). Row 3: one huge value.
    x[2 * dim..3 * dim].fill(0.0);
    x[3 * dim + 5] = 3.0e6;
    for format in [KvFormat::Fp8E4m3, KvFormat::Fp8Mixed { fp8_dims: 48 }] {
        let want: Vec<u8> = x.chunks(dim).flat_map(|r| format.encode_row(r)).collect();
        let got = on_every_backend("kv_fp8_encode", |dev| dev.kv_fp8_encode(&x, 5, dim, format).unwrap());
        assert_eq!(got, want, "{format:?}");
    }
    // Ties to even: 1.0625 → 1.0 (0x38), 1.1875 → 1.25 (0x3a), −1.0625 → −1.0 (0xb8); −0
    // keeps its sign; 448 is the largest code; 1.5·2⁻⁹ (between the subnormals 2⁻⁹ and
    // 2·2⁻⁹) rounds to the even 2·2⁻⁹.
    let row1 = KvFormat::Fp8E4m3.encode_row(&x[dim..2 * dim]);
    assert_eq!(&row1[..4], &1.0f32.to_le_bytes());
    assert_eq!(&row1[4..11], &[0x38, 0x3a, 0xb8, 0x00, 0x80, 0x7e, 0x02]);
}

#[test]
fn malformed_wide_problems_are_rejected_before_launch() {
    let sh = shape(512, 512, 16, 1, KvFormat::Fp8E4m3, KvFormat::Fp8E4m3);
    let seqs = [Sequence::random(&sh, 1, 20)];
    let mut p = pack(&sh, &seqs.iter().collect::<Vec<_>>(), 16, None);
    assert!(p.check().is_ok());
    p.k_format = KvFormat::Fp8Mixed { fp8_dims: 446 };
    let msg = |p: &DecodeProblem| match p.check() {
        Err(AttentionError::Invalid(m)) => m,
        other => panic!("expected Invalid, got {other:?}"),
    };
    assert!(msg(&p).contains("fp8_dims = 446"), "{}", msg(&p));
    p.k_format = KvFormat::Fp8E4m3;
    p.v_head_dim = Some(640);
    assert!(msg(&p).contains("V rows of 640"), "{}", msg(&p));
    p.v_head_dim = None;
    p.k.pop();
    assert!(msg(&p).contains("not a whole number"), "{}", msg(&p));
    let e =
        onekernel_ops::Device::new(&mut cpu(), &manifest(), &root().join("generated")).kv_fp8_encode(&[1.0; 6], 1, 6, KvFormat::Fp8E4m3).unwrap_err();
    assert!(matches!(e, CallError::Invalid { kernel: "kv_fp8_encode", argument: "dim", .. }), "{e}");
    let e = onekernel_ops::Device::new(&mut cpu(), &manifest(), &root().join("generated")).kv_fp8_encode(&[1.0; 8], 2, 4, KvFormat::F16).unwrap_err();
    assert!(matches!(e, CallError::Invalid { argument: "format", .. }), "{e}");
}

#[test]
fn a_mixed_fixture_without_fp8_dims_is_an_error_naming_the_field() {
    let mut fx = fixture("mixed448_d512_mqa_sinks.json");
    fx.as_object_mut().unwrap().remove("fp8_dims");
    let e = run_attention(&fx, &mut onekernel_ops::Device::new(&mut cpu(), &manifest(), &root().join("generated"))).unwrap_err();
    assert!(e.contains("needs the field `fp8_dims`"), "{e}");
    fx["fp8_dims"] = serde_json::json!(446);
    let e = run_attention(&fx, &mut onekernel_ops::Device::new(&mut cpu(), &manifest(), &root().join("generated"))).unwrap_err();
    assert!(e.contains("fp8_dims = 446"), "{e}");
}
