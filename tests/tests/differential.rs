//! Random differential testing: seeded draws of shapes, options and special values
//! (lengths of 1, primes, workgroup and page boundaries, NaN, ±∞, subnormals) for every
//! kernel family — norms, argmax, decode attention (every K/V format, paged or not,
//! deterministic and fast splits, softcap, ALiBi, mask, sinks), KV quantization (encoders,
//! scores, rows), the gated delta net, the layer kernels (RoPE, MoE routing, Sinkhorn) and
//! NVFP4 — each run on the interpreter and on every other backend present (lavapipe and msl-emu in CI, CUDA and NVIDIA Vulkan on the GPU machine), whose
//! outputs must be bitwise equal (every NaN equals every NaN). Bounded for CI:
//! `ONEKERNEL_DIFF_CASES` draws per family (default 12) from `ONEKERNEL_DIFF_SEED`
//! (default fixed). A failure prints the one-line command that reproduces it.

use onekernel_dsl::types::StorageType;
use onekernel_ops::linear::{GdnInputs, RawGates};
use onekernel_ops::Device;
use onekernel_runtime::{Args, Backend, HostBuffer, Launch};
use onekernel_tests::harness::{all_backends_and_msl_emu, manifest, root};
use onekernel_tests::Rng;

fn seed() -> u64 {
    std::env::var("ONEKERNEL_DIFF_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0x5eed_d1ff)
}

fn cases() -> u64 {
    std::env::var("ONEKERNEL_DIFF_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(12)
}

/// The command that reruns draw `i` of `test` alone.
fn reproduce(test: &str, i: u64) -> String {
    format!("ONEKERNEL_DIFF_SEED={} ONEKERNEL_DIFF_CASES={} cargo test -p onekernel-tests --test differential {test}", seed(), i + 1)
}

/// Bitwise equal, NaN equal to NaN.
fn same(a: &[f32], b: &[f32]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x.to_bits() != y.to_bits() && !(x.is_nan() && y.is_nan())).or((a.len() != b.len()).then_some(0))
}

/// A length from the edges the kernels must handle: 1, small primes, workgroup sizes and
/// their neighbours, and a random one up to `max`.
fn length(r: &mut Rng, max: u32) -> u32 {
    const EDGES: [u32; 10] = [1, 2, 3, 7, 31, 127, 255, 256, 257, 1021];
    if r.below(2) == 0 {
        EDGES[r.below(EDGES.len() as u32) as usize].min(max)
    } else {
        1 + r.below(max)
    }
}

/// Values in `[lo, hi)` with, one draw in three, special values sprinkled in: NaN, ±∞,
/// subnormals, ±0.
fn values(r: &mut Rng, n: usize, lo: f64, hi: f64) -> Vec<f32> {
    let mut v = r.f32_vec(n, lo, hi);
    if r.below(3) == 0 {
        const SPECIAL: [f32; 6] = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-40, -1e-42, -0.0];
        for _ in 0..(1 + n / 50) {
            let at = r.below(n as u32) as usize;
            v[at] = SPECIAL[r.below(SPECIAL.len() as u32) as usize];
        }
    }
    v
}

/// Runs one launch of catalogue kernel `name` on `b`; buffer `out` as f32.
fn launch(b: &mut dyn Backend, name: &str, mut args: Args, groups: [u32; 3], out: &str) -> Vec<f32> {
    let m = manifest();
    let k = m.kernel(name).unwrap();
    let artifacts = root().join("generated");
    let l = Launch { kernel: k, artifacts: &artifacts, spec: &k.variants[0].spec, groups };
    b.launch(&l, &mut args).unwrap_or_else(|e| panic!("{name} on {}: {e}", b.name()));
    args.get_buffer(out).unwrap().to_f32()
}

/// Runs `draw` for each case on every backend; the interpreter's result is the reference.
fn differential(test: &str, mut draw: impl FnMut(&mut Rng) -> (String, Box<dyn Fn(&mut dyn Backend) -> Vec<f32>>)) {
    let mut backends = all_backends_and_msl_emu();
    let mut rng = Rng::new(seed());
    for i in 0..cases() {
        let (what, run) = draw(&mut rng);
        let want = run(backends[0].as_mut());
        for b in backends.iter_mut().skip(1) {
            let got = run(b.as_mut());
            if let Some(at) = same(&want, &got) {
                panic!(
                    "{test} draw {i} ({what}) on {}: element {at}: interpreter {:?} vs {:?}\nreproduce: {}",
                    b.name(),
                    want.get(at),
                    got.get(at),
                    reproduce(test, i)
                );
            }
        }
        println!("{test} draw {i}: {what}: {} backends agree", backends.len());
    }
}

#[test]
fn norms_agree_bitwise_on_random_rows() {
    differential("norms_agree_bitwise_on_random_rows", |r| {
        let (rows, cols) = (1 + r.below(3), length(r, 5000));
        let (n, c) = ((rows * cols) as usize, cols as usize);
        let (x, w, bias) = (values(r, n, -4.0, 4.0), r.f32_vec(c, 0.5, 1.5), r.f32_vec(c, -0.5, 0.5));
        let layer = r.below(2) == 0;
        let name = if layer { "layer_norm_f32" } else { "rms_norm_f32" };
        let what = format!("{name} {rows} x {cols}");
        (
            what,
            Box::new(move |b: &mut dyn Backend| {
                let mut args = Args::new()
                    .buffer("x", HostBuffer::from_f32(&x))
                    .buffer("w", HostBuffer::from_f32(&w))
                    .buffer("y", HostBuffer::zeros(StorageType::F32, n))
                    .scalar("n_cols", cols)
                    .scalar("eps", 1e-5f32);
                if layer {
                    args = args.buffer("b", HostBuffer::from_f32(&bias));
                }
                launch(b, name, args, [rows, 1, 1], "y")
            }),
        )
    });
}

#[test]
fn argmax_agrees_bitwise_on_random_rows() {
    differential("argmax_agrees_bitwise_on_random_rows", |r| {
        let (rows, cols) = (1 + r.below(4), length(r, 3000));
        let n = (rows * cols) as usize;
        // Few distinct values: ties are common.
        let x: Vec<f32> = values(r, n, 0.0, 4.0).into_iter().map(|v| if v.is_finite() { v.floor() } else { v }).collect();
        (
            format!("argmax_rows {rows} x {cols}"),
            Box::new(move |b: &mut dyn Backend| {
                let args = Args::new()
                    .buffer("x", HostBuffer::from_f32(&x))
                    .buffer("value", HostBuffer::zeros(StorageType::F32, rows as usize))
                    .buffer("index", HostBuffer::zeros(StorageType::U32, rows as usize))
                    .scalar("n_cols", cols);
                let m = manifest();
                let k = m.kernel("argmax_rows").unwrap();
                let artifacts = root().join("generated");
                let l = Launch { kernel: k, artifacts: &artifacts, spec: &k.variants[0].spec, groups: [rows, 1, 1] };
                let mut args = args;
                b.launch(&l, &mut args).unwrap();
                let mut out = args.get_buffer("value").unwrap().to_f32();
                out.extend(args.get_buffer("index").unwrap().to_u32().iter().map(|&i| f32::from_bits(i)));
                out
            }),
        )
    });
}

#[test]
fn gated_delta_net_agrees_bitwise_on_random_calls() {
    differential("gated_delta_net_agrees_bitwise_on_random_calls", |r| {
        let s = [16u32, 32, 64, 128][r.below(4) as usize];
        let hk = 1 + r.below(3);
        let h = hk * (1 + r.below(3));
        let (t, bn) = (1 + r.below(4), 1 + r.below(5));
        let (kda, raw) = (r.below(2) == 0, r.below(2) == 0);
        let u = |x: u32| x as usize;
        let x = GdnInputs {
            s_v: s,
            n_heads: h,
            n_k_heads: hk,
            n_tokens: t,
            n_seqs: bn,
            kda,
            q: values(r, u(bn * t * hk * s), -0.5, 0.5),
            k: r.f32_vec(u(bn * t * hk * s), -0.5, 0.5),
            v: values(r, u(bn * t * h * s), -1.0, 1.0),
            g: r.f32_vec(u(bn * t * h * if kda { s } else { 1 }), -1.0, 0.0),
            beta: r.f32_vec(u(bn * t * h), 0.0, 1.0),
            raw_gates: raw.then(|| RawGates { a: r.f32_vec(u(h), -1.0, -0.1), dt_bias: r.f32_vec(u(h * if kda { s } else { 1 }), -0.5, 0.5) }),
        };
        let n_slots = bn + r.below(4);
        let mut slots: Vec<i32> = (0..n_slots as i32).collect();
        for i in (1..slots.len()).rev() {
            slots.swap(i, r.below(i as u32 + 1) as usize);
        }
        slots.truncate(bn as usize);
        let cache = r.f32_vec(n_slots as usize * x.state_len(), -1.0, 1.0);
        let what = format!("S {s} H {h} Hk {hk} T {t} B {bn} kda {kda} raw {raw}, {n_slots} slots");
        (
            what,
            Box::new(move |b: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                let mut dev = Device::new(b, &m, &artifacts);
                let mut c = cache.clone();
                let out = dev.gated_delta_net_cached(&x, &mut c, Some(&slots), true).unwrap().out;
                [out, c].concat()
            }),
        )
    });
}

/// Decode attention on random batches: head sizes, GQA ratios, page sizes around the
/// sequence lengths, every K/V format, softcap, ALiBi, mask and sinks, paged or
/// contiguous, the deterministic and fast splits, with special values in the queries.
#[test]
fn decode_attention_agrees_bitwise_on_random_batches() {
    use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
    use onekernel_ops::attention::{KvFormat, Split};
    differential("decode_attention_agrees_bitwise_on_random_batches", |r| {
        const FORMATS: [KvFormat; 5] = [KvFormat::F32, KvFormat::F16, KvFormat::Bf16, KvFormat::Q8_0, KvFormat::Q4_0];
        let (k_format, v_format) = (FORMATS[r.below(5) as usize], FORMATS[r.below(5) as usize]);
        let block = k_format.is_block() || v_format.is_block();
        let d = if block { [32u32, 64, 128, 256][r.below(4) as usize] } else { [2u32, 6, 32, 64, 80, 128, 256][r.below(7) as usize] };
        let hkv = [1u32, 2, 4][r.below(3) as usize];
        let hq = hkv * [1u32, 2, 4, 8][r.below(4) as usize];
        let page = [1u32, 7, 16, 64][r.below(4) as usize];
        let b = 1 + r.below(3);
        // Lengths at and around page and chunk boundaries, 1, and random ones.
        let lens: Vec<u32> = (0..b)
            .map(|_| match r.below(3) {
                0 => (page * (1 + r.below(8)) + r.below(3)).saturating_sub(1).max(1),
                1 => [1u32, 127, 128, 129, 255, 256, 257][r.below(7) as usize],
                _ => length(r, 700),
            })
            .collect();
        let shape = BatchShape {
            head_dim: d,
            n_heads: hq,
            n_kv_heads: hkv,
            k_format,
            v_format,
            scale: r.range(0.05, 0.3) as f32,
            softcap: if r.below(3) == 0 { 20.0 } else { 0.0 },
            max_bias: if r.below(4) == 0 { 8.0 } else { 0.0 },
            mask: r.below(2) == 0,
            sinks: (r.below(3) == 0).then(|| r.f32_vec(hq as usize, -2.0, 2.0)),
            v_head_dim: None,
        };
        let seqs: Vec<Sequence> = lens.iter().map(|&l| Sequence::random(&shape, r.next_u64(), l)).collect();
        let shuffle = (r.below(2) == 0).then(|| r.next_u64());
        let mut p = pack(&shape, &seqs.iter().collect::<Vec<_>>(), page, shuffle);
        // Special values in the queries (a NaN query row is NaN in every backend's output).
        let special = r.below(4) == 0;
        if special {
            let at = r.below(p.q.len() as u32) as usize;
            p.q[at] = [f32::INFINITY, 1e-40, -0.0, f32::MAX][r.below(4) as usize];
        }
        let split = match r.below(3) {
            0 => Split::Deterministic,
            1 => Split::DeterministicLongAfter { long_after: 1 + r.below(300), chunks_per_group: Some(1 + r.below(2)) },
            _ => Split::Fast { chunk_tokens: 1 + r.below(256) },
        };
        let what = format!(
            "D {d} Hq {hq} Hkv {hkv} P {page} lens {lens:?} K {} V {} softcap {} alibi {} mask {} sinks {} paged {} {split:?}",
            k_format.name(),
            v_format.name(),
            shape.softcap,
            shape.max_bias,
            shape.mask,
            shape.sinks.is_some(),
            shuffle.is_some()
        );
        (
            what,
            Box::new(move |be: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                let out = p.run(split, &mut Device::new(be, &m, &artifacts)).unwrap_or_else(|e| panic!("on {}: {e}", be.name()));
                // The interpreter's result against the float64 reference, where the inputs
                // are ordinary numbers (every other backend equals it bitwise).
                if be.name() == "cpu" && !special {
                    let (nmse, _) = onekernel_ops::attention::reference::compare(&out, &onekernel_ops::attention::reference::reference(&p));
                    assert!(nmse <= 1e-9, "NMSE {nmse:e} against the float64 reference");
                }
                out
            }),
        )
    });
}

/// Wide and FP8 decode attention (`attn_decode_wide`) and exact prefill on random
/// problems: every K/V format including FP8 and mixed rows (E4M3 dimensions at any
/// multiple of 4), K rows up to 576 and V rows up to 512, one or two KV heads with up to
/// 20 query heads each (two head blocks), random pages, lengths around chunk edges, both
/// splits; half the draws as a prefill of up to 6 query tokens per sequence.
#[test]
fn wide_decode_and_prefill_agree_bitwise_on_random_calls() {
    use onekernel_ops::attention::batch::{pack, BatchShape, Sequence};
    use onekernel_ops::attention::{KvFormat, PrefillProblem, RowLayout, Split};
    differential("wide_decode_and_prefill_agree_bitwise_on_random_calls", |r| {
        let (d, dv) = [(64u32, 64u32), (128, 96), (320, 320), (512, 512), (576, 512)][r.below(5) as usize];
        let format = |r: &mut Rng, dim: u32| match r.below(4) {
            0 => KvFormat::Fp8E4m3,
            1 => KvFormat::Fp8Mixed { fp8_dims: 4 * r.below(dim / 4 + 1) },
            _ => [KvFormat::F32, KvFormat::F16, KvFormat::Bf16, KvFormat::Q8_0, KvFormat::Q4_0][r.below(5) as usize],
        };
        let (k_format, v_format) = (format(r, d), format(r, dv));
        let hkv = 1 + r.below(2);
        let hq = hkv * [1u32, 4, 16, 20][r.below(4) as usize];
        let page = [1u32, 16, 64][r.below(3) as usize];
        let b = 1 + r.below(2);
        let lens: Vec<u32> = (0..b).map(|_| [1u32, 127, 128, 129, 256, 257][r.below(6) as usize].max(length(r, 300) * r.below(2))).collect();
        let shape = BatchShape {
            scale: r.range(0.03, 0.2) as f32,
            softcap: if r.below(3) == 0 { 20.0 } else { 0.0 },
            max_bias: if r.below(4) == 0 { 8.0 } else { 0.0 },
            mask: r.below(2) == 0,
            sinks: (r.below(3) == 0).then(|| r.f32_vec(hq as usize, -2.0, 2.0)),
            v_head_dim: (dv != d).then_some(dv),
            ..BatchShape::new(d, hq, hkv, k_format, v_format)
        };
        let seqs: Vec<Sequence> = lens.iter().map(|&l| Sequence::random(&shape, r.next_u64(), l)).collect();
        let shuffle = (r.below(2) == 0).then(|| r.next_u64());
        let p = pack(&shape, &seqs.iter().collect::<Vec<_>>(), page, shuffle);
        let split = match r.below(3) {
            0 => Split::Deterministic,
            1 => Split::DeterministicLongAfter { long_after: 1 + r.below(300), chunks_per_group: None },
            _ => Split::Fast { chunk_tokens: 1 + r.below(512) },
        };
        let q_tokens: Vec<u32> = lens.iter().map(|&l| 1 + r.below(l.min(6))).collect();
        let prefill = (r.below(2) == 0).then(|| PrefillProblem {
            head_dim: d,
            n_heads: hq,
            n_kv_heads: hkv,
            page_size: page,
            pages_per_seq: p.pages_per_seq,
            kv_len: lens.clone(),
            q: r.f32_vec((q_tokens.iter().sum::<u32>() * hq * d) as usize, -1.0, 1.0),
            q_tokens: q_tokens.clone(),
            k_format,
            v_format,
            k: p.k.clone(),
            v: p.v.clone(),
            block_table: p.block_table.clone(),
            q_layout: RowLayout::dense(hq, d),
            out_layout: RowLayout::dense(hq, dv),
            scale: p.scale,
            softcap: p.softcap,
            max_bias: p.max_bias,
            mask: p.mask.clone(),
            sinks: p.sinks.clone(),
            v_head_dim: p.v_head_dim,
        });
        let what = format!(
            "K {d} V {dv} Hq {hq} Hkv {hkv} P {page} lens {lens:?} K {k_format:?} V {v_format:?} softcap {} alibi {} mask {} sinks {} paged {} {split:?}{}",
            shape.softcap,
            shape.max_bias,
            shape.mask,
            shape.sinks.is_some(),
            shuffle.is_some(),
            prefill.as_ref().map_or(String::new(), |_| format!(", prefill of {q_tokens:?} tokens"))
        );
        let desc = what.clone();
        (
            what,
            Box::new(move |be: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                let mut dev = Device::new(be, &m, &artifacts);
                let (out, problem) = match &prefill {
                    Some(pf) => (pf.run(split, &mut dev), pf.as_decode().unwrap()),
                    None => (p.run(split, &mut dev), p.clone()),
                };
                let out = out.unwrap_or_else(|e| panic!("{desc} on {}: {e}", be.name()));
                if be.name() == "cpu" {
                    let want = onekernel_ops::attention::reference::reference(&problem);
                    let (nmse, _) = onekernel_ops::attention::reference::compare(&out, &want);
                    assert!(
                        nmse <= 1e-9,
                        "{desc}: NMSE {nmse:e} against the float64 reference ({} NaN outputs, {} NaN reference values of {})",
                        out.iter().filter(|x| x.is_nan()).count(),
                        want.iter().filter(|x| x.is_nan()).count(),
                        out.len()
                    );
                }
                out
            }),
        )
    });
}

/// The KV-quant family on random rows: the TBQ and QJL encoders (bytes), every turbo
/// layout's scores in both domains, QJL scores with and without the projection, Polar
/// scores and rows, QJL rows, with GQA ratios and token counts around tile edges.
#[test]
fn kv_quant_agrees_bitwise_on_random_rows() {
    use onekernel_ops::kvquant::codec;
    use onekernel_ops::kvquant::ops::TurboFormat;
    differential("kv_quant_agrees_bitwise_on_random_rows", |r| {
        let hkv = [1u32, 2, 8][r.below(3) as usize];
        let hq = hkv * [1u32, 4][r.below(2) as usize];
        let n = length(r, 300);
        let rows = (n * hkv) as usize;
        let x = values(r, rows * 128, -2.0, 2.0);
        let q = values(r, hq as usize * 128, -1.0, 1.0);
        let bytes = |v: Vec<u8>| v.into_iter().map(f32::from).collect::<Vec<f32>>();
        let op = r.below(7);
        // Each 128-value row as one QJL key (non-finite values as 0: the encoder's input).
        let qjl_rows = |x: &[f32], prj: &[f32]| -> Vec<u8> {
            x.chunks(128)
                .flat_map(|row| codec::encode_qjl(&row.iter().map(|v| if v.is_finite() { *v } else { 0.0 }).collect::<Vec<_>>(), prj))
                .collect()
        };
        let prj = codec::qjl_projection(r.next_u64());
        type Run = Box<dyn Fn(&mut Device) -> Vec<f32>>;
        let (what, run): (String, Run) = match op {
            0 => {
                let bits = 3 + r.below(2);
                (format!("tbq_quantize {bits}-bit, {rows} rows"), Box::new(move |dev| bytes(dev.tbq_quantize(&x, bits).unwrap())))
            }
            1 => (format!("qjl_quantize {rows} keys"), Box::new(move |dev| bytes(dev.qjl_quantize(&x, &prj).unwrap()))),
            2 => {
                let f = [TurboFormat::Turbo3, TurboFormat::Tbq3, TurboFormat::Turbo4Legacy, TurboFormat::Tbq4, TurboFormat::Tcq][r.below(5) as usize];
                let real = f.has_real_domain() && r.below(2) == 0;
                let enc: Vec<u8> = x
                    .chunks(128)
                    .flat_map(|row| {
                        let row: Vec<f32> = row.iter().map(|v| if v.is_finite() { *v } else { 0.5 }).collect();
                        match f {
                            TurboFormat::Turbo3 => codec::encode_turbo3(&row),
                            TurboFormat::Tbq3 => codec::encode_tbq3(&row),
                            TurboFormat::Turbo4Legacy => codec::encode_turbo4_legacy(&row),
                            TurboFormat::Tbq4 => codec::encode_tbq4(&row),
                            TurboFormat::Tcq => codec::encode_tcq(&row),
                        }
                    })
                    .collect();
                (
                    format!("turbo_score {f:?} real {real}, {n} tokens, Hq {hq} Hkv {hkv}"),
                    Box::new(move |dev| dev.turbo_scores(f, real, &q, &enc, hkv).unwrap()),
                )
            }
            3 => {
                let project = r.below(2) == 0;
                let enc = qjl_rows(&x, &prj);
                let qd = if project { q.clone() } else { values(r, hq as usize * 256, -1.0, 1.0) };
                (
                    format!("qjl_score project {project}, {n} tokens, Hq {hq} Hkv {hkv}"),
                    Box::new(move |dev| dev.qjl_scores(&qd, project.then_some(&prj[..]), &enc, hq, hkv).unwrap()),
                )
            }
            4 | 5 => {
                let use_qjl = r.below(2) == 0;
                let enc: Vec<u8> = x
                    .chunks(128)
                    .flat_map(|row| codec::encode_polar(&row.iter().map(|v| if v.is_finite() { *v } else { 1.0 }).collect::<Vec<_>>(), use_qjl))
                    .collect();
                if op == 4 {
                    let preht = r.below(2) == 0;
                    (
                        format!("polar_score qjl {use_qjl} preht {preht}, {n} tokens, Hq {hq} Hkv {hkv}"),
                        Box::new(move |dev| dev.polar_scores(&q, &enc, hkv, use_qjl, preht).unwrap()),
                    )
                } else {
                    (format!("polar_get_rows qjl {use_qjl}, {rows} rows"), Box::new(move |dev| dev.polar_rows(&enc, use_qjl).unwrap()))
                }
            }
            _ => {
                let enc = qjl_rows(&x, &prj);
                (format!("qjl_get_rows {rows} rows"), Box::new(move |dev| dev.qjl_rows(&enc, &prj).unwrap()))
            }
        };
        (
            what,
            Box::new(move |be: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                run(&mut Device::new(be, &m, &artifacts))
            }),
        )
    });
}

/// The layer kernels on random calls: RoPE (pairing, partial offset, inverse, both output
/// types, special values), MoE routing (expert counts up to 1024, k, NaN logits) and
/// Sinkhorn (n, rounds, eps).
#[test]
fn layer_kernels_agree_bitwise_on_random_calls() {
    use onekernel_ops::layers::{rope_cache, RopeInputs, RopeOutput, RopePairing};
    differential("layer_kernels_agree_bitwise_on_random_calls", |r| {
        type Run = Box<dyn Fn(&mut Device) -> Vec<f32>>;
        let (what, run): (String, Run) = match r.below(3) {
            0 => {
                let n_rot = 2 * (1 + r.below(64));
                let head_dim = n_rot + 2 * r.below(40);
                let off = 2 * r.below((head_dim - n_rot) / 2 + 1);
                let (tokens, heads) = (1 + r.below(5), 1 + r.below(4));
                let cache = rope_cache(64, n_rot, 10000.0, r.below(4) == 0);
                let pairing = if r.below(2) == 0 { RopePairing::NeoX } else { RopePairing::Interleaved };
                let out = if r.below(2) == 0 { RopeOutput::F32 } else { RopeOutput::Bf16 };
                // No subnormal inputs: plain products of them depend on the device's
                // denormal mode (NVIDIA's Vulkan flushes them; docs/RUNTIME.md,
                // "Denormals"), which the contract leaves open.
                let xs: Vec<f32> = values(r, (tokens * heads * head_dim) as usize, -8.0, 8.0)
                    .into_iter()
                    .map(|v| if v != 0.0 && v.abs() < f32::MIN_POSITIVE { 0.0 } else { v })
                    .collect();
                let x = RopeInputs {
                    x: xs,
                    pos: (0..tokens).map(|_| r.below(64)).collect(),
                    n_heads: heads,
                    head_dim,
                    rot_offset: off,
                    pairing,
                    inverse: r.below(2) == 0,
                };
                (
                    format!("rope {pairing:?} {out:?} D {head_dim} rotary {n_rot} at {off}, {tokens} tokens x {heads} heads, inverse {}", x.inverse),
                    Box::new(move |d| d.rope(&x, &cache, out).unwrap()),
                )
            }
            1 => {
                let e = length(r, 1024).max(1);
                let k = 1 + r.below(e.min(16));
                let tokens = 1 + r.below(6);
                let logits = values(r, (tokens * e) as usize, -8.0, 8.0);
                let bias = r.f32_vec(e as usize, -1.0, 1.0);
                (
                    format!("moe_route E {e} k {k}, {tokens} tokens"),
                    Box::new(move |d| {
                        let out = d.moe_route(&logits, &bias, k, 2.5).unwrap();
                        out.weights.into_iter().chain(out.experts.into_iter().map(f32::from_bits)).collect()
                    }),
                )
            }
            _ => {
                let n = [4u32, 8][r.below(2) as usize];
                let (tokens, rounds) = (length(r, 200), 1 + r.below(20));
                let x = values(r, (tokens * n * n) as usize, -6.0, 6.0);
                let eps = [0.0f32, 1e-6, 1e-3][r.below(3) as usize];
                (format!("sinkhorn n {n}, {tokens} tokens, {rounds} rounds, eps {eps}"), Box::new(move |d| d.sinkhorn(&x, n, rounds, eps).unwrap()))
            }
        };
        (
            what,
            Box::new(move |be: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                run(&mut Device::new(be, &m, &artifacts))
            }),
        )
    });
}

/// NVFP4 on random tensors with zeros of both signs and subnormals: quantization (the
/// global scale from the data or a static one), dequantization and GEMV.
#[test]
fn nvfp4_agrees_bitwise_on_random_calls() {
    use onekernel_ops::nvfp4::{codec, Activation, GlobalScale};
    differential("nvfp4_agrees_bitwise_on_random_calls", |r| {
        let (rows, cols) = (1 + r.below(6) as usize, 16 * (1 + r.below(80)) as usize);
        let mut x = r.f32_vec(rows * cols, -50.0, 50.0);
        for _ in 0..(1 + x.len() / 20) {
            let at = r.below(x.len() as u32) as usize;
            x[at] = [0.0, -0.0, 1e-40, -1e-42, 1e-30][r.below(5) as usize];
        }
        let scale = if r.below(3) == 0 { GlobalScale::Static(r.range(1e-4, 0.1) as f32) } else { GlobalScale::FromData };
        let act: Vec<f32> = r.f32_vec(cols, -2.0, 2.0).into_iter().map(|v| if v.abs() < 0.05 { -0.0 } else { v }).collect();
        (
            format!("{rows} x {cols}, {scale:?}"),
            Box::new(move |be: &mut dyn Backend| {
                let (m, artifacts) = (manifest(), root().join("generated"));
                let mut d = Device::new(be, &m, &artifacts);
                let t = d.nvfp4_quantize(&x, rows, cols, scale).unwrap();
                let xq = codec::quantize(&act, 1, cols, codec::global_scale(&act));
                let mut out: Vec<f32> = t.packed.iter().chain(&t.scales).map(|&b| b as f32).collect();
                out.push(t.global);
                out.extend(d.nvfp4_dequantize(&t).unwrap());
                out.extend(d.nvfp4_gemv(&t, Activation::F32(&act)).unwrap());
                out.extend(d.nvfp4_gemv(&t, Activation::Nvfp4(&xq)).unwrap());
                out
            }),
        )
    });
}
