//! Decode attention against the independent float64 reference
//! (`onekernel_ops::attention::reference`, plain Rust from the schema's definition, not through
//! the DSL), over random shapes and options: D ∈ {64, 128, 256}, GQA 1/2/4, 1–3
//! sequences of 1–400 tokens, pages of 1/16/64 tokens, paged or contiguous, softcap,
//! mask with ALiBi, sinks, and K and V each in f32 / f16 / bf16 / q8_0 / q4_0
//! independently. NMSE must be ≤ 1e-6 over the stored (dequantized) values, on the
//! interpreter, and every GPU backend present (lavapipe in CI; CUDA and NVIDIA Vulkan on
//! the GPU machine) must give the interpreter's bits. The reference itself is checked
//! against the external fixtures' numpy outputs.

use onekernel_ops::attention::batch::{pack, BatchShape, SeqRng, Sequence};
use onekernel_ops::attention::reference::{compare, reference};
use onekernel_ops::attention::{KvFormat, Split};
use onekernel_ops::fixture::attention_problem;
use onekernel_tests::harness::{all_backends, manifest, root};

#[test]
fn the_reference_reproduces_the_external_fixtures() {
    let dir = root().join("tests/fixtures/attention");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let fx: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let p = attention_problem(&fx).unwrap();
        fn flat(v: &serde_json::Value) -> Vec<f64> {
            match v {
                serde_json::Value::Array(a) => a.iter().flat_map(flat).collect(),
                v => vec![v.as_f64().unwrap()],
            }
        }
        let want = flat(&fx["expected_out"]);
        let got = reference(&p);
        let worst = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        println!("{}: reference vs numpy max |diff| {worst:.2e}", path.display());
        assert_eq!(got.len(), want.len());
        // The runner takes q, mask and sinks as f32 (the kernels' types); the files hold
        // them in float64, which moves outputs by ~1e-8.
        assert!(worst < 1e-6, "{}: {worst}", path.display());
        // Negative control: the comparison notices a wrong reference.
        let mut wrong = p.clone();
        wrong.scale *= 1.01;
        assert!(reference(&wrong).iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-5));
        n += 1;
    }
    assert!(n >= 4, "expected the four attention fixtures in {}", dir.display());
}

#[test]
fn random_problems_match_the_f64_reference() {
    let manifest = manifest();
    // The interpreter, and every GPU backend present (each must also give its bits).
    let mut backends = all_backends();
    for seed in 0..20u64 {
        let mut r = SeqRng::new(0xa77e_0000 + seed);
        let d = [64u32, 128, 256][r.below(3) as usize];
        let hkv = 1 + r.below(2);
        let hq = hkv * [1u32, 2, 4][r.below(3) as usize];
        let b = 1 + r.below(3) as usize;
        let p = [1u32, 16, 64][r.below(3) as usize];
        let (kf, vf) = (KvFormat::ALL[r.below(5) as usize], KvFormat::ALL[r.below(5) as usize]);
        let paged = r.below(2) == 1;
        let max_bias = if r.below(3) == 0 { 8.0 } else { 0.0 };
        let shape = BatchShape {
            head_dim: d,
            n_heads: hq,
            n_kv_heads: hkv,
            k_format: kf,
            v_format: vf,
            scale: 1.0 / (d as f32).sqrt(),
            softcap: if r.below(2) == 1 { 30.0 } else { 0.0 },
            max_bias,
            mask: max_bias > 0.0 || r.below(2) == 1,
            sinks: (r.below(2) == 1).then(|| (0..hq).map(|_| r.range(-2.0, 2.0) as f32).collect()),
            v_head_dim: None,
        };
        let seqs: Vec<Sequence> = (0..b).map(|i| Sequence::random(&shape, seed * 100 + i as u64, 1 + r.below(400))).collect();
        let problem = pack(&shape, &seqs.iter().collect::<Vec<_>>(), p, paged.then_some(seed));
        let want = reference(&problem);
        let outs: Vec<Vec<f32>> = backends
            .iter_mut()
            .map(|b| {
                problem
                    .run(Split::Deterministic, &mut onekernel_ops::Device::new(b.as_mut(), &manifest, &root().join("generated")))
                    .unwrap_or_else(|e| panic!("seed {seed} on {}: {e}", b.name()))
            })
            .collect();
        for (b, o) in backends.iter().zip(&outs).skip(1) {
            assert_eq!(
                o.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                outs[0].iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "seed {seed}: {} differs from the interpreter",
                b.name()
            );
        }
        let (nmse, max_abs) = compare(&outs[0], &want);
        println!(
            "seed {seed}: D {d} Hq {hq} Hkv {hkv} B {b} P {p} lens {:?} {}/{} paged {paged} softcap {} alibi {max_bias} mask {} sinks {}: NMSE {nmse:.2e}, max |err| {max_abs:.2e}",
            problem.kv_len, kf.name(), vf.name(), shape.softcap, shape.mask, shape.sinks.is_some()
        );
        assert!(nmse <= 1e-6 && max_abs <= 2e-3, "seed {seed}: NMSE {nmse}, max |err| {max_abs}");
    }
}
