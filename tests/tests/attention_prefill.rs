//! Prefill attention, exact mode: every query token's output has, bit for bit, the bits
//! of the decode step at its position, whether the tokens arrive in one prefill, in
//! chunks of 1, 7, 64 or 256 tokens (each after the earlier ones are in the cache, the
//! later ones not yet written), or one by one as decode steps, on every backend present.
//! The fast split is the control that the comparison sees the reduction order. Also the
//! external `flash_attn_prefill` fixtures, a varlen batch, and explicit strides.

use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
use onekernel_ops::attention::reference::{compare, reference};
use onekernel_ops::attention::{DecodeProblem, KvFormat, PrefillProblem, RowLayout, Split};
use onekernel_ops::fixture::run_attention;
use onekernel_tests::harness::{all_backends_and_msl_emu, fixture_files, manifest, on_every_backend, root};
use onekernel_tests::{bits, uniform};

fn shape(d: u32, hq: u32, hkv: u32, k: KvFormat, v: KvFormat) -> BatchShape {
    BatchShape::new(d, hq, hkv, k, v)
}

/// One sequence of `n` tokens in a shuffled paged cache, and `n` query vectors.
struct Stream {
    cache: DecodeProblem,
    q: Vec<f32>,
    n: u32,
}

impl Stream {
    fn new(sh: &BatchShape, n: u32, seed: u64) -> Stream {
        let seq = Sequence::random(sh, seed, n);
        let cache = pack(sh, &[&seq], 16, Some(seed));
        let q = uniform(seed + 1, (n * sh.n_heads * sh.head_dim) as usize, -1.0, 1.0);
        Stream { cache, q, n }
    }

    fn row(&self) -> usize {
        (self.cache.n_heads * self.cache.head_dim) as usize
    }

    /// The cache as it is before tokens `limit …` are written: their rows hold NaN
    /// (0xff bytes), so a read past a query's position would show.
    fn cache_until(&self, limit: u32) -> (Vec<u8>, Vec<u8>) {
        let c = &self.cache;
        let (kb, vb) = (c.k_format.row_bytes(c.head_dim as usize), c.v_format.row_bytes(c.v_dim() as usize));
        let (mut k, mut v) = (c.k.clone(), c.v.clone());
        let table = c.block_table.as_ref().unwrap();
        for t in limit..self.n {
            for h in 0..c.n_kv_heads {
                let cell = ((table[(t / c.page_size) as usize] as u32 * c.page_size + t % c.page_size) * c.n_kv_heads + h) as usize;
                k[cell * kb..][..kb].fill(0xff);
                v[cell * vb..][..vb].fill(0xff);
            }
        }
        (k, v)
    }

    /// The step that adds queries `from … from + count − 1` with the cache written up to them.
    fn prefill(&self, from: u32, count: u32) -> PrefillProblem {
        let c = &self.cache;
        let (k, v) = self.cache_until(from + count);
        let r = self.row();
        PrefillProblem {
            head_dim: c.head_dim,
            n_heads: c.n_heads,
            n_kv_heads: c.n_kv_heads,
            page_size: c.page_size,
            pages_per_seq: c.pages_per_seq,
            kv_len: vec![from + count],
            q_tokens: vec![count],
            k_format: c.k_format,
            v_format: c.v_format,
            k,
            v,
            block_table: c.block_table.clone(),
            q: self.q[from as usize * r..(from + count) as usize * r].to_vec(),
            q_layout: RowLayout::dense(c.n_heads, c.head_dim),
            out_layout: RowLayout::dense(c.n_heads, c.v_dim()),
            scale: c.scale,
            softcap: c.softcap,
            max_bias: c.max_bias,
            mask: c.mask.clone(),
            sinks: c.sinks.clone(),
            v_head_dim: c.v_head_dim,
        }
    }

    /// The decode step of the query at position `t`.
    fn decode(&self, t: u32) -> DecodeProblem {
        let r = self.row();
        let (k, v) = self.cache_until(t + 1);
        DecodeProblem { kv_len: vec![t + 1], q: self.q[t as usize * r..][..r].to_vec(), k, v, ..self.cache.clone() }
    }
}

/// The three ways, on every backend: one-shot prefill, chunked prefill with each chunk
/// size, decode steps; bitwise equal. Then the fast split differs (and is still within
/// tolerance).
fn three_ways(sh: &BatchShape, n: u32, chunks: &[u32], seed: u64) {
    let s = Stream::new(sh, n, seed);
    let what = format!("D {} {}/{} N {n}", sh.head_dim, sh.k_format.name(), sh.v_format.name());
    let split = Split::Deterministic;
    let steps: Vec<u32> = on_every_backend(&format!("{what}: decode steps"), |dev| {
        (0..n).flat_map(|t| bits(&s.decode(t).run(split, dev).unwrap_or_else(|e| panic!("{what}: step {t}: {e}")))).collect()
    });
    let one_shot = on_every_backend(&format!("{what}: one-shot prefill"), |dev| bits(&s.prefill(0, n).run(split, dev).unwrap()));
    assert_eq!(one_shot, steps, "{what}: one-shot prefill against decode steps");
    for &c in chunks {
        let chunked = on_every_backend(&format!("{what}: chunks of {c}"), |dev| {
            (0..n).step_by(c as usize).flat_map(|from| bits(&s.prefill(from, c.min(n - from)).run(split, dev).unwrap())).collect::<Vec<u32>>()
        });
        assert_eq!(chunked, steps, "{what}: prefill in chunks of {c} against decode steps");
    }
    // Control: the fast split's chunks reduce in another order.
    let fast = on_every_backend(&format!("{what}: fast prefill"), |dev| bits(&s.prefill(0, n).run(Split::Fast { chunk_tokens: 64 }, dev).unwrap()));
    assert_ne!(fast, steps, "{what}: 64-token fast chunks must give other bits");
    let full = s.prefill(0, n);
    let want = reference(&full.as_decode().unwrap());
    let got: Vec<f32> = steps.iter().map(|&b| f32::from_bits(b)).collect();
    let (nmse, max_abs) = compare(&got, &want);
    println!("{what}: NMSE {nmse:.2e}, max |err| {max_abs:.2e}");
    assert!(nmse <= 1e-6 && max_abs <= 2e-3, "{what}: NMSE {nmse}");
}

#[test]
fn prefill_one_shot_chunked_and_decode_steps_give_the_same_bits() {
    let mut sh = shape(128, 8, 2, KvFormat::F16, KvFormat::F16);
    sh.mask = true;
    sh.softcap = 30.0;
    sh.sinks = Some((0..8).map(|h| h as f32 * 0.3 - 1.0).collect());
    three_ways(&sh, 300, &[1, 7, 64, 256], 11);
}

#[test]
fn prefill_invariance_holds_for_quantized_and_wide_fp8_caches() {
    three_ways(&shape(64, 4, 1, KvFormat::Q8_0, KvFormat::Bf16), 140, &[7, 64], 12);
    three_ways(&shape(512, 16, 1, KvFormat::Fp8Mixed { fp8_dims: 448 }, KvFormat::Fp8E4m3), 140, &[7, 64], 13);
}

/// A varlen batch (T = 5, 1, 17 over caches of 40, 1, 300 tokens, paged, mask, ALiBi) in
/// a padded, head-interleaved query layout: each query's row equals its decode step and
/// the dense layout's bits; within the float64 reference's bounds.
#[test]
fn varlen_batches_with_strided_queries_match_their_decode_steps() {
    let mut sh = shape(128, 8, 2, KvFormat::F16, KvFormat::Q4_0);
    sh.mask = true;
    sh.max_bias = 8.0;
    let lens = [40u32, 1, 300];
    let ts = [5u32, 1, 17];
    let seqs: Vec<Sequence> = lens.iter().enumerate().map(|(i, &l)| Sequence::random(&sh, 50 + i as u64, l)).collect();
    let cache = pack(&sh, &seqs.iter().collect::<Vec<_>>(), 16, Some(3));
    let n: u32 = ts.iter().sum();
    let dense = uniform(99, (n * 8 * 128) as usize, -1.0, 1.0);
    // Token stride 8·128 + 40, head stride 130: padding after every row and token.
    let layout = RowLayout { token_stride: 8 * 128 + 40 + 7 * 2, head_stride: 130 };
    let mut strided = vec![f32::NAN; layout.len(n as usize, 8, 128)];
    for i in 0..n as usize {
        for h in 0..8 {
            strided[i * layout.token_stride + h * layout.head_stride..][..128].copy_from_slice(&dense[(i * 8 + h) * 128..][..128]);
        }
    }
    let step = |q: Vec<f32>, q_layout: RowLayout| PrefillProblem {
        head_dim: 128,
        n_heads: 8,
        n_kv_heads: 2,
        page_size: 16,
        pages_per_seq: cache.pages_per_seq,
        kv_len: lens.to_vec(),
        q_tokens: ts.to_vec(),
        k_format: sh.k_format,
        v_format: sh.v_format,
        k: cache.k.clone(),
        v: cache.v.clone(),
        block_table: cache.block_table.clone(),
        q,
        q_layout,
        out_layout: RowLayout::dense(8, 128),
        scale: sh.scale,
        softcap: 0.0,
        max_bias: 8.0,
        mask: cache.mask.clone(),
        sinks: None,
        v_head_dim: None,
    };
    let (a, b) = (step(dense.clone(), RowLayout::dense(8, 128)), step(strided, layout));
    let out = on_every_backend("varlen prefill", |dev| {
        (bits(&a.run(Split::Deterministic, dev).unwrap()), bits(&b.run(Split::Deterministic, dev).unwrap()))
    });
    assert_eq!(out.0, out.1, "the strided layout reads the same queries");
    // Each query alone as a decode step of its sequence.
    let positions = a.positions();
    let seq_of: Vec<usize> = ts.iter().enumerate().flat_map(|(s, &t)| vec![s; t as usize]).collect();
    let alone = on_every_backend("varlen decode steps", |dev| {
        (0..n as usize)
            .flat_map(|i| {
                let s = seq_of[i];
                let pps = cache.pages_per_seq as usize;
                let p = DecodeProblem {
                    kv_len: vec![positions[i] + 1],
                    q: dense[i * 1024..][..1024].to_vec(),
                    block_table: cache.block_table.as_ref().map(|t| t[s * pps..][..pps].to_vec()),
                    mask: cache.mask.as_ref().map(|m| m[s * pps * 16..][..pps * 16].to_vec()),
                    ..cache.clone()
                };
                bits(&p.run(Split::Deterministic, dev).unwrap())
            })
            .collect::<Vec<u32>>()
    });
    assert_eq!(out.0, alone, "each query of the varlen batch against its own decode step");
    let got: Vec<f32> = out.0.iter().map(|&x| f32::from_bits(x)).collect();
    let (nmse, max_abs) = compare(&got, &reference(&a.as_decode().unwrap()));
    assert!(nmse <= 1e-6 && max_abs <= 2e-3, "NMSE {nmse}, max {max_abs}");
}

#[test]
fn the_prefill_fixtures_match_the_f64_reference() {
    let m = manifest();
    for (f, fx) in fixture_files("prefill") {
        for mut b in all_backends_and_msl_emu() {
            let r = run_attention(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &m, &root().join("generated")))
                .unwrap_or_else(|e| panic!("{} on {}: {e}", f.display(), b.name()));
            println!("{} on {}: NMSE {:.3e}, max |err| {:.3e}, cosine {:.8}", f.display(), r.backend, r.nmse, r.max_abs, r.cosine.unwrap());
            assert!(r.passed, "{} on {}: {r:?}", f.display(), b.name());
        }
    }
}

/// The seed's bug: queries read with a wrong token stride (T·… instead of Hq·D). The
/// fixture's bounds must reject what that reads.
#[test]
fn a_wrong_query_token_stride_fails_the_fixture() {
    let mut fx: serde_json::Value =
        serde_json::from_slice(&std::fs::read(root().join("tests/fixtures/prefill/prefill_f16_t5_causal.json")).unwrap()).unwrap();
    let (t, hq, d) = (5usize, 8usize, 128usize);
    let q: Vec<f64> = fx["q"].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect();
    // What a kernel indexing q[b][h][t] (head-major) reads where the file is token-major.
    let b = q.len() / (t * hq * d);
    let mut wrong = vec![0.0; q.len()];
    for s in 0..b {
        for tt in 0..t {
            for h in 0..hq {
                let src = ((s * hq + h) * t + tt) * d;
                let dst = ((s * t + tt) * hq + h) * d;
                wrong[dst..dst + d].copy_from_slice(&q[src..src + d]);
            }
        }
    }
    fx["q"] = serde_json::json!(wrong);
    let r =
        run_attention(&fx, &mut onekernel_ops::Device::new(&mut onekernel_tests::harness::cpu(), &manifest(), &root().join("generated"))).unwrap();
    println!("wrong token stride: NMSE {:.3e}, cosine {:.6}", r.nmse, r.cosine.unwrap());
    assert!(!r.passed, "{r:?}");
}
