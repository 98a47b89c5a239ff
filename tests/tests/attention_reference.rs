//! Decode attention against an independent float64 reference written here in plain
//! Rust (not through the DSL), over random shapes and options: D ∈ {64, 128, 256},
//! GQA 1/2/4, 1–3 sequences of 1–400 tokens, pages of 1/16/64 tokens, paged or
//! contiguous, softcap, mask with ALiBi, sinks, and f32 / f16 / bf16 / q8_0 / q4_0
//! caches. Each random problem is written in the fixture schema and run through the
//! same runner as the external fixtures; NMSE must be ≤ 1e-6 (over the stored, i.e.
//! dequantized, values).

use onekernel_dsl::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::fixture::run_attention;
use onekernel_tests::Rng;
use serde_json::{json, Value};
use std::path::PathBuf;

/// Encodes one `[D]` row and returns its bytes and the values it stores.
fn encode_row(ty: &str, rng: &mut Rng, d: usize) -> (Vec<u8>, Vec<f64>) {
    let mut bytes = Vec::new();
    let mut vals = Vec::new();
    match ty {
        "f32" | "f16" | "bf16" => {
            for _ in 0..d {
                let x = rng.range(-1.0, 1.0) as f32;
                match ty {
                    "f32" => {
                        bytes.extend(x.to_le_bytes());
                        vals.push(x as f64);
                    }
                    "f16" => {
                        let h = f32_to_f16(x);
                        bytes.extend(h.to_le_bytes());
                        vals.push(f16_to_f32(h) as f64);
                    }
                    _ => {
                        let h = f32_to_bf16(x);
                        bytes.extend(h.to_le_bytes());
                        vals.push(bf16_to_f32(h) as f64);
                    }
                }
            }
        }
        "q8_0" | "q4_0" => {
            for _ in 0..d / 32 {
                let scale = f32_to_f16(rng.range(0.002, 0.05) as f32);
                let s = f16_to_f32(scale) as f64;
                bytes.extend(scale.to_le_bytes());
                if ty == "q8_0" {
                    for _ in 0..32 {
                        let q = rng.below(255) as i32 - 127;
                        bytes.push(q as i8 as u8);
                        vals.push(s * q as f64);
                    }
                } else {
                    let nibbles: Vec<u8> = (0..32).map(|_| rng.below(16) as u8).collect();
                    for j in 0..16 {
                        bytes.push(nibbles[j] | (nibbles[j + 16] << 4));
                    }
                    vals.extend(nibbles.iter().map(|&n| s * (n as f64 - 8.0)));
                }
            }
        }
        other => panic!("{other}"),
    }
    (bytes, vals)
}

/// ggml's ALiBi slope of head h.
fn slope(h: usize, n_heads: usize, max_bias: f64) -> f64 {
    if max_bias <= 0.0 {
        return 1.0;
    }
    let mut n = 1;
    while n * 2 <= n_heads {
        n *= 2;
    }
    let m0 = 2f64.powf(-max_bias / n as f64);
    let m1 = 2f64.powf(-max_bias / 2.0 / n as f64);
    if h < n {
        m0.powi(h as i32 + 1)
    } else {
        m1.powi(2 * (h - n) as i32 + 1)
    }
}

#[test]
fn random_problems_match_the_f64_reference() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest: Manifest = serde_json::from_slice(&std::fs::read(root.join("generated/manifest.json")).unwrap()).unwrap();
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let types = ["f32", "f16", "bf16", "q8_0", "q4_0"];
    for seed in 0..15u64 {
        let mut r = Rng::new(0xa77e_0000 + seed);
        let d = [64usize, 128, 256][r.below(3) as usize];
        let hkv = 1 + r.below(2) as usize;
        let hq = hkv * [1usize, 2, 4][r.below(3) as usize];
        let b = 1 + r.below(3) as usize;
        let p = [1usize, 16, 64][r.below(3) as usize];
        let lens: Vec<usize> = (0..b).map(|_| 1 + r.below(400) as usize).collect();
        let pps = lens.iter().max().unwrap().div_ceil(p);
        let n_pages = b * pps + r.below(3) as usize;
        let kt = types[r.below(5) as usize];
        let vt = if kt.starts_with('q') { ["q8_0", "q4_0"][r.below(2) as usize] } else { ["f32", "f16", "bf16"][r.below(3) as usize] };
        let paged = r.below(2) == 1;
        let softcap = if r.below(2) == 1 { 30.0 } else { 0.0 };
        let max_bias = if r.below(3) == 0 { 8.0 } else { 0.0 };
        let use_mask = max_bias > 0.0 || r.below(2) == 1;
        let use_sinks = r.below(2) == 1;
        let scale = 1.0 / (d as f64).sqrt();
        // The cache: every row of every page, stored and as the values it holds.
        let (mut kb, mut vb, mut kv, mut vv) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..n_pages * p * hkv {
            let (bytes, vals) = encode_row(kt, &mut r, d);
            kb.extend(bytes);
            kv.push(vals);
            let (bytes, vals) = encode_row(vt, &mut r, d);
            vb.extend(bytes);
            vv.push(vals);
        }
        // Page of (sequence, logical page): a random permutation when paged.
        let mut perm: Vec<usize> = (0..n_pages).collect();
        if paged {
            for i in (1..n_pages).rev() {
                perm.swap(i, r.below(i as u32 + 1) as usize);
            }
        }
        let page_of = |s: usize, lp: usize| if paged { perm[s * pps + lp] } else { s * pps + lp };
        let q: Vec<f64> = (0..b * hq * d).map(|_| r.range(-1.0, 1.0) as f32 as f64).collect();
        let mask: Vec<f64> = (0..b * pps * p)
            .map(|_| if r.below(10) == 0 { -65504.0 } else { f16_to_f32(f32_to_f16(r.range(-3.0, 0.0) as f32)) as f64 })
            .collect();
        let sinks: Vec<f64> = (0..hq).map(|_| r.range(-2.0, 2.0) as f32 as f64).collect();
        // The f64 reference.
        let mut expected = vec![0.0f64; b * hq * d];
        for s in 0..b {
            for h in 0..hq {
                let kvh = h / (hq / hkv);
                let qrow = &q[(s * hq + h) * d..(s * hq + h + 1) * d];
                let row = |t: usize| (page_of(s, t / p) * p + t % p) * hkv + kvh;
                let mut logits: Vec<f64> = (0..lens[s])
                    .map(|t| {
                        let mut x = scale * qrow.iter().zip(&kv[row(t)]).map(|(a, b)| a * b).sum::<f64>();
                        if softcap > 0.0 {
                            x = softcap * (x / softcap).tanh();
                        }
                        if use_mask {
                            x += slope(h, hq, max_bias) * mask[s * pps * p + t];
                        }
                        x
                    })
                    .collect();
                let mut all = logits.clone();
                if use_sinks {
                    all.push(sinks[h]);
                }
                let m = all.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                let denom: f64 = all.iter().map(|x| (x - m).exp()).sum();
                for x in logits.iter_mut() {
                    *x = (*x - m).exp() / denom;
                }
                for (t, pt) in logits.iter().enumerate() {
                    for (o, vx) in expected[(s * hq + h) * d..(s * hq + h + 1) * d].iter_mut().zip(&vv[row(t)]) {
                        *o += pt * vx;
                    }
                }
            }
        }
        let table: Option<Vec<Vec<i64>>> = paged.then(|| (0..b).map(|s| (0..pps).map(|lp| page_of(s, lp) as i64).collect()).collect());
        let fx = json!({
            "kernel": "flash_attn_decode", "head_dim": d, "n_heads": hq, "n_kv_heads": hkv, "n_seq": b,
            "kv_len": lens, "page_size": p, "n_pages": n_pages, "pages_per_seq": pps,
            "k": kb, "v": vb, "k_type": kt, "v_type": vt, "block_table": table,
            "q": q, "scale": scale, "logit_softcap": softcap, "max_bias": max_bias,
            "mask": if use_mask { json!(mask) } else { Value::Null },
            "sinks": if use_sinks { json!(sinks) } else { Value::Null },
            "expected_out": expected, "tolerance": {"nmse": 1e-6, "max_abs": 2e-3},
        });
        let res = run_attention(&fx, &mut cpu, &manifest, &root.join("generated")).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        println!(
            "seed {seed}: D {d} Hq {hq} Hkv {hkv} B {b} P {p} lens {lens:?} {kt}/{vt} paged {paged} softcap {softcap} alibi {max_bias} mask {use_mask} sinks {use_sinks}: NMSE {:.2e}",
            res.nmse
        );
        assert!(res.passed, "seed {seed}: {res:?}");
    }
}
