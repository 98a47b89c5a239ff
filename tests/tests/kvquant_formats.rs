//! The KV-quant formats without published fixtures here, checked from the specification:
//! host encoders round-trip within their format's error (measured and bounded), and
//! every kernel path (legacy turbo3, tbq3 and tbq4 in both score domains, turbo3_tcq,
//! Polar mul_mv / preht / residual / get_rows, QJL mul_mv / get_rows, fused attention
//! with Polar V and a causal limit) matches a float64 evaluation of the host decoders on
//! the interpreter and lavapipe. The QJL projection generator reproduces the spec's
//! check values and SHA-256. Malformed inputs are rejected before launch.

use onekernel_ops::kvquant::codec::{self, rotate, D};
use onekernel_ops::kvquant::ops::{KvQuantError, TurboFormat};
use onekernel_ops::Device;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_tests::harness::{all_backends, manifest, root};
use onekernel_tests::Rng;
use sha2::{Digest, Sha256};

/// Gaussian rows (Box–Muller over the fixed generator).
fn gaussian(r: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let (u, v) = (r.unit().max(1e-12), r.unit());
            ((-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()) as f32
        })
        .collect()
}

fn dot(a: &[f32], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| *x as f64 * y).sum()
}

fn rel_err(x: &[f32], y: &[f64]) -> f64 {
    let e: f64 = x.iter().zip(y).map(|(a, b)| (*a as f64 - b).powi(2)).sum();
    (e / x.iter().map(|a| (*a as f64).powi(2)).sum::<f64>()).sqrt()
}

/// Kernel output vs float64 reference: |Δ| relative to the reference's scale.
fn assert_close(what: &str, got: &[f32], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    let scale = want.iter().fold(1e-30f64, |m, v| m.max(v.abs()));
    let worst = got.iter().zip(want).map(|(g, w)| (*g as f64 - w).abs()).fold(0.0, f64::max) / scale;
    println!("{what}: max |Δ| / max |ref| = {worst:.2e}");
    assert!(worst < 2e-5, "{what}: {worst}");
}

#[test]
fn qjl_projection_matches_the_specification() {
    for (seed, first8, sha) in [
        (
            0xCAFE_BABE_1234_5678u64,
            [0.087_382_71_f32, -0.560_412_8, 1.768_523_8, 0.566_575_2, -1.762_175_6, 0.537_345_9, 0.21331194, -0.345_040_23],
            "835077d4726d18c2f7b1ce29b60e5bc7a4aed1ffee66511476bec5799cbc3ac2",
        ),
        (
            0xF00D_CAFE_BABE_1234,
            [0.894_858_2, -0.150_600_87, 1.004_024, 0.536_920_7, -1.103_302_5, 0.269_341_02, 0.602_593_2, 2.070_531_6],
            "71c426d00b1c4b636bad725a3a2b1b764b2c717decdf51f7883054af6b55e72c",
        ),
    ] {
        let p = codec::qjl_projection(seed);
        assert_eq!(p.len(), 128 * 256);
        for (a, b) in p.iter().zip(first8) {
            assert!((a - b).abs() <= 1e-6 * b.abs().max(1.0), "seed {seed:x}: {a} vs {b}");
        }
        let digest: String = Sha256::digest(p.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>()).iter().map(|b| format!("{b:02x}")).collect();
        println!("seed {seed:#x}: SHA-256 {digest}");
        assert_eq!(digest, sha, "seed {seed:#x}");
    }
}

#[test]
fn encoders_round_trip_within_their_format_error() {
    let mut r = Rng::new(0x7e57);
    let prj = codec::qjl_projection(0xCAFE_BABE_1234_5678);
    let mut worst = [0.0f64; 8];
    for _ in 0..40 {
        let x = gaussian(&mut r, D);
        let xd: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let rot = rotate(&xd);
        let rot32: Vec<f32> = rot.iter().map(|&v| v as f32).collect();
        let errs = [
            rel_err(&rot32, &codec::decode_turbo3(&codec::encode_turbo3(&x))),
            rel_err(&x, &codec::decode_tbq_real(&codec::encode_tbq3(&x), 3)),
            rel_err(&rot32, &codec::decode_turbo4_legacy(&codec::encode_turbo4_legacy(&x))),
            rel_err(&x, &codec::decode_tbq_real(&codec::encode_tbq4(&x), 4)),
            rel_err(&rot32, &codec::decode_tcq(&codec::encode_tcq(&x))),
            rel_err(&x, &codec::decode_polar(&codec::encode_polar(&x, false), false)),
            rel_err(&x, &codec::decode_polar(&codec::encode_polar(&x, true), true)),
            // QJL keeps inner products, not values: 1 − cosine(k̂, k).
            {
                let k = codec::decode_qjl(&codec::encode_qjl(&x, &prj), &prj);
                1.0 - dot(&x, &k) / (xd.iter().map(|v| v * v).sum::<f64>().sqrt() * k.iter().map(|v| v * v).sum::<f64>().sqrt())
            },
        ];
        for (w, e) in worst.iter_mut().zip(errs) {
            *w = w.max(e);
        }
    }
    let names = ["turbo3", "tbq3", "turbo4 (66 B)", "tbq4", "turbo3_tcq", "polar", "polar + residual", "qjl (1 − cos)"];
    // Bounds: 3-bit Lloyd–Max on N(0,1) has relative RMS error ≈ 0.18, 4-bit ≈ 0.10; the
    // trellis beats scalar 3-bit; bounds leave room for a 128-sample row's spread.
    let bounds = [0.30, 0.30, 0.17, 0.17, 0.25, 0.17, 0.17, 0.35];
    for ((n, w), b) in names.iter().zip(worst).zip(bounds) {
        println!("{n}: worst relative error over 40 rows {w:.3} (bound {b})");
        assert!(w <= b, "{n}: {w} > {b}");
    }
    // The trellis search beats scalar quantization with the same 3 bits.
    let x = gaussian(&mut Rng::new(3), D);
    let rot: Vec<f32> = rotate(&x.iter().map(|&v| v as f64).collect::<Vec<_>>()).iter().map(|&v| v as f32).collect();
    assert!(rel_err(&rot, &codec::decode_tcq(&codec::encode_tcq(&x))) < rel_err(&rot, &codec::decode_turbo3(&codec::encode_turbo3(&x))));
}

#[test]
fn every_kernel_path_matches_the_f64_decoders() {
    let m = manifest();
    let artifacts = root().join("generated");
    let mut r = Rng::new(0x5c0e);
    let n = 150;
    let xs: Vec<Vec<f32>> = (0..n).map(|_| gaussian(&mut r, D)).collect();
    let q = gaussian(&mut r, 2 * D);
    let prj = codec::qjl_projection(0xF00D_CAFE_BABE_1234);
    for mut be in all_backends() {
        let name = be.name();
        let mut dev = Device::new(be.as_mut(), &m, &artifacts);
        let encode_all = |f: fn(&[f32]) -> Vec<u8>| xs.iter().flat_map(|x| f(x)).collect::<Vec<u8>>();
        type Encode = fn(&[f32]) -> Vec<u8>;
        type Decode = fn(&[u8]) -> Vec<f64>;
        let cases: [(TurboFormat, bool, Encode, Decode); 7] = [
            (TurboFormat::Turbo3, false, codec::encode_turbo3, codec::decode_turbo3),
            (TurboFormat::Tbq3, false, codec::encode_tbq3, |b| codec::decode_tbq(b, 3)),
            (TurboFormat::Tbq3, true, codec::encode_tbq3, |b| codec::decode_tbq_real(b, 3)),
            (TurboFormat::Turbo4Legacy, false, codec::encode_turbo4_legacy, codec::decode_turbo4_legacy),
            (TurboFormat::Tbq4, false, codec::encode_tbq4, |b| codec::decode_tbq(b, 4)),
            (TurboFormat::Tbq4, true, codec::encode_tbq4, |b| codec::decode_tbq_real(b, 4)),
            (TurboFormat::Tcq, false, codec::encode_tcq, codec::decode_tcq),
        ];
        for (format, real, enc, dec) in cases {
            let rows = encode_all(enc);
            let got = dev.turbo_scores(format, real, &q, &rows, 1).unwrap();
            let rb = format.row_bytes();
            let want: Vec<f64> = (0..2).flat_map(|qi| rows.chunks(rb).map(|b| dot(&q[qi * D..][..D], &dec(b))).collect::<Vec<_>>()).collect();
            assert_close(&format!("{name}: {format:?} scores, real domain {real}"), &got, &want);
        }
        for use_qjl in [false, true] {
            let rows: Vec<u8> = xs.iter().flat_map(|x| codec::encode_polar(x, use_qjl)).collect();
            let decoded: Vec<Vec<f64>> = rows.chunks(82).map(|b| codec::decode_polar(b, use_qjl)).collect();
            let want: Vec<f64> = (0..2).flat_map(|qi| decoded.iter().map(|k| dot(&q[qi * D..][..D], k)).collect::<Vec<_>>()).collect();
            assert_close(&format!("{name}: polar mul_mv, residual {use_qjl}"), &dev.polar_scores(&q, &rows, 1, use_qjl, false).unwrap(), &want);
            let mut hq: Vec<f64> = q[..D].iter().map(|&v| v as f64).collect();
            codec::fwht(&mut hq);
            let hq: Vec<f32> = hq.iter().map(|&v| v as f32).collect();
            assert_close(&format!("{name}: polar preht, residual {use_qjl}"), &dev.polar_scores(&hq, &rows, 1, use_qjl, true).unwrap(), &want[..n]);
            let flat: Vec<f64> = decoded.iter().flatten().copied().collect();
            assert_close(&format!("{name}: polar get_rows, residual {use_qjl}"), &dev.polar_rows(&rows, use_qjl).unwrap(), &flat);
        }
        let keys: Vec<u8> = xs.iter().flat_map(|x| codec::encode_qjl(x, &prj)).collect();
        let dequant: Vec<Vec<f64>> = keys.chunks(34).map(|b| codec::decode_qjl(b, &prj)).collect();
        let want: Vec<f64> = (0..2).flat_map(|qi| dequant.iter().map(|k| dot(&q[qi * D..][..D], k)).collect::<Vec<_>>()).collect();
        assert_close(&format!("{name}: qjl mul_mv"), &dev.qjl_scores(&q, Some(&prj), &keys, 2, 1).unwrap(), &want);
        let flat: Vec<f64> = dequant.iter().flatten().copied().collect();
        assert_close(&format!("{name}: qjl get_rows"), &dev.qjl_rows(&keys[..34 * 20], &prj).unwrap(), &flat[..20 * D]);
        // Fused attention, Polar V with residual, 4 query heads over 2 KV heads, causal.
        let (hq, hkv, nkv, q_pos) = (4u32, 2u32, 75usize, 60u32);
        let sketch = gaussian(&mut Rng::new(9), 4 * 256);
        let vals: Vec<u8> = xs.iter().flat_map(|x| codec::encode_polar(x, true)).collect();
        let got = dev.fused_attention(&sketch, &keys, &vals, Some(true), hq, hkv, 0.088_388_35, Some(q_pos)).unwrap();
        let mut want = vec![0.0f64; 4 * D];
        for h in 0..4usize {
            let hk = h / 2;
            let raw: Vec<f64> = (0..=q_pos as usize)
                .map(|t| codec::qjl_score(&keys[(hk * nkv + t) * 34..][..34], &sketch[h * 256..][..256]) * 0.088_388_35f32 as f64)
                .collect();
            let mx = raw.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let l: f64 = raw.iter().map(|s| (s - mx).exp()).sum();
            for (t, s) in raw.iter().enumerate() {
                let v = codec::decode_polar(&vals[(hk * nkv + t) * 82..][..82], true);
                for (o, x) in want[h * D..][..D].iter_mut().zip(v) {
                    *o += (s - mx).exp() / l * x;
                }
            }
        }
        assert_close(&format!("{name}: fused QJL-K / Polar-V attention, causal"), &got, &want);
    }
}

/// Query heads over several KV heads (GQA 3 and 5: one group of four heads and a
/// remainder, tiles of 64 rows and 128 keys with a partial last tile, rows starting
/// mid-word): each head's scores are those of its KV head's rows alone.
#[test]
fn score_kernels_map_query_heads_to_their_kv_heads() {
    let m = manifest();
    let artifacts = root().join("generated");
    let mut r = Rng::new(0x6a0);
    // 71 rows: KV head 1's rows of the 66-, 82- and 34-byte layouts start mid-word.
    let (hkv, n) = (2usize, 71usize);
    let xs: Vec<Vec<f32>> = (0..hkv * n).map(|_| gaussian(&mut r, D)).collect();
    let prj = codec::qjl_projection(0xCAFE_BABE_1234_5678);
    let tbq4: Vec<u8> = xs.iter().flat_map(|x| codec::encode_tbq4(x)).collect();
    let turbo4: Vec<u8> = xs.iter().flat_map(|x| codec::encode_turbo4_legacy(x)).collect();
    let polar: Vec<u8> = xs.iter().flat_map(|x| codec::encode_polar(x, true)).collect();
    let qjl: Vec<u8> = xs.iter().flat_map(|x| codec::encode_qjl(x, &prj)).collect();
    for mut be in all_backends() {
        let name = be.name();
        let mut dev = Device::new(be.as_mut(), &m, &artifacts);
        for group in [3usize, 5] {
            let hq = hkv * group;
            let q = gaussian(&mut r, hq * D);
            let sketch = gaussian(&mut r, hq * 256);
            // want[h][t] from KV head h / group's rows, decoded on the host in f64.
            let want = |score: &dyn Fn(usize, usize) -> f64| -> Vec<f64> {
                (0..hq).flat_map(|h| (0..n).map(move |t| (h, t))).map(|(h, t)| score(h, (h / group) * n + t)).collect()
            };
            let got = dev.turbo_scores(TurboFormat::Tbq4, true, &q, &tbq4, hkv as u32).unwrap();
            assert_close(
                &format!("{name}: tbq4 real domain, GQA {group}"),
                &got,
                &want(&|h, row| dot(&q[h * D..][..D], &codec::decode_tbq_real(&tbq4[row * 72..][..72], 4))),
            );
            let got = dev.turbo_scores(TurboFormat::Turbo4Legacy, false, &q, &turbo4, hkv as u32).unwrap();
            assert_close(
                &format!("{name}: turbo4 (66 B), GQA {group}"),
                &got,
                &want(&|h, row| dot(&q[h * D..][..D], &codec::decode_turbo4_legacy(&turbo4[row * 66..][..66]))),
            );
            let got = dev.polar_scores(&q, &polar, hkv as u32, true, false).unwrap();
            assert_close(
                &format!("{name}: polar + residual, GQA {group}"),
                &got,
                &want(&|h, row| dot(&q[h * D..][..D], &codec::decode_polar(&polar[row * 82..][..82], true))),
            );
            let got = dev.qjl_scores(&sketch, None, &qjl, hq as u32, hkv as u32).unwrap();
            assert_close(
                &format!("{name}: qjl sketch, GQA {group}"),
                &got,
                &want(&|h, row| codec::qjl_score(&qjl[row * 34..][..34], &sketch[h * 256..][..256])),
            );
        }
    }
}

#[test]
fn malformed_inputs_are_rejected_before_launch() {
    let m = manifest();
    let artifacts = root().join("generated");
    let mut cpu = CpuBackend::new(onekernel_kernels::all().iter().map(|e| e.load().unwrap()));
    let mut dev = Device::new(&mut cpu, &m, &artifacts);
    let q = vec![0.5f32; 128];
    let errors: Vec<(&str, KvQuantError)> = vec![
        ("truncated turbo4 row", dev.turbo_scores(TurboFormat::Turbo4Legacy, false, &q, &[0u8; 65], 1).unwrap_err()),
        ("query not whole rows", dev.turbo_scores(TurboFormat::Tbq4, false, &q[..100], &[0u8; 72], 1).unwrap_err()),
        ("real domain of a legacy layout", dev.turbo_scores(TurboFormat::Turbo3, true, &q, &[0u8; 56], 1).unwrap_err()),
        ("qjl heads", dev.qjl_scores(&[0.0; 3 * 256], None, &[0u8; 34 * 2], 3, 2).unwrap_err()),
        ("qjl truncated", dev.qjl_scores(&[0.0; 256], None, &[0u8; 33], 1, 1).unwrap_err()),
        ("qjl projection size", dev.qjl_rows(&[0u8; 34], &[0.0; 100]).unwrap_err()),
        ("polar truncated", dev.polar_scores(&q, &[0u8; 81], 1, false, false).unwrap_err()),
        ("fused value count", dev.fused_attention(&[0.0; 256], &[0u8; 34 * 4], &[0u8; 56 * 3], None, 1, 1, 0.1, None).unwrap_err()),
    ];
    for (what, e) in errors {
        println!("{what}: {e}");
        assert!(matches!(e, KvQuantError::Invalid { .. }), "{what}: {e}");
    }
}

#[test]
fn device_encoders_agree_with_the_host_encoders() {
    let m = manifest();
    let artifacts = root().join("generated");
    let mut r = Rng::new(0xe2c0);
    let x = gaussian(&mut r, 64 * D);
    let prj = codec::qjl_projection(0xCAFE_BABE_1234_5678);
    for mut be in all_backends() {
        let name = be.name();
        let mut dev = Device::new(be.as_mut(), &m, &artifacts);
        for bits in [3u32, 4] {
            let gpu = dev.tbq_quantize(&x, bits).unwrap();
            let host: Vec<u8> = x.chunks(D).flat_map(|row| if bits == 3 { codec::encode_tbq3(row) } else { codec::encode_tbq4(row) }).collect();
            assert_eq!(gpu.len(), host.len());
            // f32 on the device, f64 preconditioning on the host: a code may differ where a
            // value sits within rounding of a decision boundary, nowhere else.
            let rows_equal =
                gpu.chunks(if bits == 3 { 56 } else { 72 }).zip(host.chunks(if bits == 3 { 56 } else { 72 })).filter(|(a, b)| a == b).count();
            let err = x
                .chunks(D)
                .zip(gpu.chunks(if bits == 3 { 56 } else { 72 }))
                .map(|(row, b)| rel_err(row, &codec::decode_tbq_real(b, bits)))
                .fold(0.0, f64::max);
            println!("{name}: tbq{bits} device encoder: {rows_equal}/64 rows byte-identical to the host encoder, worst round-trip error {err:.3}");
            assert!(rows_equal >= 60, "tbq{bits}: only {rows_equal}/64 rows match");
            assert!(err <= if bits == 3 { 0.30 } else { 0.17 });
        }
        let gpu = dev.qjl_quantize(&x, &prj).unwrap();
        let host: Vec<u8> = x.chunks(D).flat_map(|k| codec::encode_qjl(k, &prj)).collect();
        let same = gpu.chunks(34).zip(host.chunks(34)).filter(|(a, b)| a == b).count();
        println!("{name}: qjl device encoder: {same}/64 keys byte-identical to the host encoder");
        assert!(same >= 60, "qjl: only {same}/64 keys match");
    }
}

/// Benchmarks time repeated dispatches on inputs uploaded once (with an L2 flush
/// between): the results equal a single launch's, and every run is timed.
#[test]
fn repeated_launches_give_the_single_launch_results() {
    use onekernel_runtime::{Args, HostBuffer, Launch};
    let m = manifest();
    let artifacts = root().join("generated");
    let k = m.kernel("turbo_score").unwrap();
    // The TBQ4 variant (format 3).
    let spec = k.variant_with(&[("format", onekernel_dsl::types::Literal::U32(3))]).unwrap().spec.clone();
    let mut r = Rng::new(77);
    let rows: Vec<u8> = (0..40).flat_map(|_| codec::encode_tbq4(&gaussian(&mut r, D))).collect();
    let words: Vec<u32> = rows.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    let args = || {
        Args::new()
            .buffer("q", HostBuffer::from_f32(&gaussian(&mut Rng::new(5), D)))
            .buffer("k", HostBuffer::from_u32(&words))
            .buffer("levels", HostBuffer::from_f32(&onekernel_ops::kvquant::constants::TBQ4_CODEBOOK))
            .buffer("signs", HostBuffer::from_f32(&onekernel_ops::kvquant::constants::TBQ_SIGNS))
            .buffer("scores", HostBuffer::zeros(onekernel_dsl::types::StorageType::F32, 40))
            .scalar("n_heads", 1u32)
            .scalar("n_kv_heads", 1u32)
            .scalar("n_tokens", 40u32)
            .scalar("tiles_per_group", 1u32)
            .scalar("real_domain", 1u32)
    };
    for mut be in all_backends() {
        let launch = Launch { kernel: k, artifacts: &artifacts, spec: &spec, groups: [1, 1, 1] };
        let mut once = args();
        be.launch(&launch, &mut once).unwrap();
        let flush = onekernel_cli::harness::l2_flush(&m, &artifacts, 1 << 20).unwrap();
        let mut many = [args()];
        let unit = onekernel_runtime::TimedUnit {
            work: onekernel_runtime::Work::Launches { launches: std::slice::from_ref(&launch), buffers: onekernel_runtime::BufferScope::Shared },
            runs: 5,
            prelude: Some(&flush),
        };
        let times = be.time(&unit, &mut many).unwrap();
        let [many] = many;
        assert_eq!(times.len(), 5, "{}", be.name());
        assert_eq!(once.get_buffer("scores").unwrap().to_bits(), many.get_buffer("scores").unwrap().to_bits(), "{}", be.name());
        println!("{}: 5 timed runs {times:?}", be.name());
    }
}
