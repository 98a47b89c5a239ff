//! Linear attention (`gated_delta_net`, `ssm_conv`, `ssm_scan`) on every backend present
//! (the interpreter, lavapipe in CI, CUDA and NVIDIA Vulkan on the GPU machine):
//! * the shared fixtures (`tests/fixtures/gdn`, float64 numpy references) within each
//!   file's tolerance, output and state;
//! * each fusion bitwise equal to its unfused sequence (gather → kernel → scatter as
//!   separate launches) on a shuffled slot table, every output and every cache byte,
//!   slots outside the table untouched;
//! * batch invariance: a sequence's bits do not depend on B, its slot or its neighbours
//!   (B ∈ {1, 2, 8, 33});
//! * token invariance: one call of T tokens equals T calls of one token;
//! * `ssm_scan` against its float64 reference, and every GPU backend bitwise equal to
//!   the interpreter;
//! * bad input rejected before launch with the argument named.
//!
//! Negative controls: a change of 10⁻³ in one of the needle's own inputs changes its
//! bits (the comparison can fail), and T − 1 single-token calls do not give T tokens' state.

use onekernel_dsl::manifest::Manifest;
use onekernel_ops::linear::fixture::run_linear;
use onekernel_ops::linear::{reference, ConvInputs, GdnInputs, LinearError, RawGates, ScanInputs};
use onekernel_ops::Device;
use onekernel_runtime::validate::splitmix;
use onekernel_runtime::Backend;
use onekernel_tests::harness::{all_backends_and_msl_emu, fixture_files, manifest, root};
use onekernel_tests::{bits, uniform};
use std::path::PathBuf;

fn generated() -> PathBuf {
    root().join("generated")
}

/// A random gated-delta-net call of `b` sequences.
#[allow(clippy::too_many_arguments)]
fn gdn(seed: u64, s: u32, h: u32, hk: u32, t: u32, b: u32, kda: bool, raw: bool) -> GdnInputs {
    let n = |x: u32| x as usize;
    let gate = n(b * t * h * if kda { s } else { 1 });
    GdnInputs {
        s_v: s,
        n_heads: h,
        n_k_heads: hk,
        n_tokens: t,
        n_seqs: b,
        kda,
        q: uniform(seed, n(b * t * hk * s), -0.5, 0.5),
        k: uniform(seed + 1, n(b * t * hk * s), -0.5, 0.5),
        v: uniform(seed + 2, n(b * t * h * s), -1.0, 1.0),
        g: uniform(seed + 3, gate, if raw { -2.0 } else { -0.5 }, if raw { 2.0 } else { 0.0 }),
        beta: uniform(seed + 4, n(b * t * h), if raw { -3.0 } else { 0.0 }, if raw { 3.0 } else { 1.0 }),
        raw_gates: raw
            .then(|| RawGates { a: uniform(seed + 5, n(h), -1.0, -0.1), dt_bias: uniform(seed + 6, n(h * if kda { s } else { 1 }), -0.5, 0.5) }),
    }
}

/// `f` on a [`Device`] over each backend present.
fn each_backend(mut f: impl FnMut(&mut Device, &str)) {
    let m: Manifest = manifest();
    let artifacts = generated();
    for mut b in all_backends_and_msl_emu() {
        let name = b.name().to_string();
        let backend: &mut dyn Backend = b.as_mut();
        f(&mut Device::new(backend, &m, &artifacts), &name);
    }
}

#[test]
fn the_shared_fixtures_match_their_f64_references() {
    let files = fixture_files("gdn");
    assert!(files.len() >= 5, "fixtures missing from tests/fixtures/gdn");
    each_backend(|dev, name| {
        for (f, fx) in &files {
            let r = run_linear(fx, dev).unwrap_or_else(|e| panic!("{} on {name}: {e}", f.display()));
            println!("{} on {name}: NMSE {:.3e} (≤ {:e}), max |err| {:.3e} (≤ {:e})", f.display(), r.nmse, r.nmse_bound, r.max_abs, r.max_abs_bound);
            assert!(r.passed, "{} on {name}: {r:?}", f.display());
        }
    });
}

#[test]
fn a_wrong_expected_state_fails_the_fixture() {
    let p = root().join("tests/fixtures/gdn/gdn_s64_h4_hk2_decode_b3.json");
    let mut fx: serde_json::Value = serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap();
    fx["expected_state"][7] = serde_json::json!(fx["expected_state"][7].as_f64().unwrap() + 0.01);
    let (m, artifacts) = (manifest(), generated());
    let mut cpu = onekernel_tests::harness::cpu();
    let r = run_linear(&fx, &mut Device::new(&mut cpu, &m, &artifacts)).unwrap();
    assert!(!r.passed, "a state off by 0.01 passed: {r:?}");
}

/// Slots `0..n` shuffled by `seed`, the first `b` taken.
fn shuffled_slots(seed: u64, n: u32, b: u32) -> Vec<i32> {
    let mut s = seed;
    let mut pool: Vec<i32> = (0..n as i32).collect();
    for i in (1..pool.len()).rev() {
        pool.swap(i, (splitmix(&mut s) % (i as u64 + 1)) as usize);
    }
    pool.truncate(b as usize);
    pool
}

#[test]
fn gdn_state_gather_and_write_back_equal_the_unfused_sequence() {
    for (s, kda, raw) in [(64, false, false), (32, true, true), (16, false, true)] {
        let x = gdn(11 + s as u64, s, 4, 2, 2, 3, kda, raw);
        let slots = shuffled_slots(5, 7, 3);
        let cache0 = uniform(99, 7 * x.state_len(), -1.0, 1.0);
        each_backend(|dev, name| {
            let mut unfused = cache0.clone();
            let want_out = dev.gated_delta_net_unfused(&x, &mut unfused, &slots).unwrap();
            // Both fusions: gather and in-place write-back.
            let mut fused = cache0.clone();
            let r = dev.gated_delta_net_cached(&x, &mut fused, Some(&slots), true).unwrap();
            assert_eq!(bits(&r.out), bits(&want_out), "S {s}: output on {name}");
            assert_eq!(bits(&fused), bits(&unfused), "S {s}: cache on {name}");
            assert!(r.state.is_none());
            let per = x.state_len();
            for slot in 0..7 {
                let row = |c: &[f32]| bits(&c[slot * per..][..per]);
                if slots.contains(&(slot as i32)) {
                    assert_ne!(row(&fused), row(&cache0), "S {s}: slot {slot} was not written on {name}");
                } else {
                    assert_eq!(row(&fused), row(&cache0), "S {s}: slot {slot} outside the table changed on {name}");
                }
            }
            // Gather alone: the new states come out per sequence, the cache is untouched.
            let mut read_only = cache0.clone();
            let g = dev.gated_delta_net_cached(&x, &mut read_only, Some(&slots), false).unwrap();
            assert_eq!(bits(&g.out), bits(&want_out), "S {s}: gather-only output on {name}");
            assert_eq!(bits(&read_only), bits(&cache0), "S {s}: gather-only wrote the cache on {name}");
            let new = g.state.unwrap();
            for (i, &slot) in slots.iter().enumerate() {
                assert_eq!(bits(&new[i * per..][..per]), bits(&unfused[slot as usize * per..][..per]), "S {s}: state {i} on {name}");
            }
            // Write-back alone: sequence b in slot b.
            let mut in_place = cache0.clone();
            let w = dev.gated_delta_net_cached(&x, &mut in_place, None, true).unwrap();
            let plain = dev.gated_delta_net(&x, &cache0[..3 * per]).unwrap();
            assert_eq!(bits(&w.out), bits(&plain.out), "S {s}: write-back-only output on {name}");
            assert_eq!(bits(&in_place[..3 * per]), bits(&plain.state.unwrap()), "S {s}: write-back-only states on {name}");
            assert_eq!(bits(&in_place[3 * per..]), bits(&cache0[3 * per..]), "S {s}: slots past B changed on {name}");
            println!("S {s} kda {kda} raw {raw} on {name}: fused = unfused, bitwise");
        });
    }
}

#[test]
fn conv_state_update_and_gather_equal_the_unfused_sequence() {
    for (w, silu, t) in [(4, true, 1), (3, false, 5), (2, true, 2)] {
        let (c, b) = (200u32, 3u32);
        let conv = ConvInputs { d_conv: w, channels: c, n_tokens: t, n_seqs: b, silu, weight: uniform(7, (c * w) as usize, -1.0, 1.0) };
        let x_new = uniform(8, (b * c * t) as usize, -2.0, 2.0);
        let cache0 = uniform(9, 6 * conv.state_len(), -2.0, 2.0);
        let slots = shuffled_slots(w as u64, 6, b);
        each_backend(|dev, name| {
            for table in [Some(&slots[..]), None] {
                let mut unfused = cache0.clone();
                let want = dev.ssm_conv_unfused(&conv, &x_new, &mut unfused, table).unwrap();
                let mut fused = cache0.clone();
                let got = dev.ssm_conv_cached(&conv, &x_new, &mut fused, table).unwrap();
                assert_eq!(bits(&got), bits(&want), "W {w} T {t} table {}: output on {name}", table.is_some());
                assert_eq!(bits(&fused), bits(&unfused), "W {w} T {t} table {}: conv cache on {name}", table.is_some());
                let per = conv.state_len();
                let used: Vec<usize> = match table {
                    Some(s) => s.iter().map(|&x| x as usize).collect(),
                    None => (0..b as usize).collect(),
                };
                for row in 0..6 {
                    let same = bits(&fused[row * per..][..per]) == bits(&cache0[row * per..][..per]);
                    assert_eq!(same, !used.contains(&row), "W {w} T {t}: conv-state row {row} on {name}");
                }
            }
            println!("W {w} silu {silu} T {t} on {name}: fused = unfused, bitwise");
        });
    }
}

#[test]
fn the_window_form_equals_the_in_place_form_and_the_reference() {
    let (w, c, t, b) = (4u32, 96u32, 3u32, 2u32);
    let conv = ConvInputs { d_conv: w, channels: c, n_tokens: t, n_seqs: b, silu: true, weight: uniform(1, (c * w) as usize, -1.0, 1.0) };
    let window = uniform(2, (b * c * (w - 1 + t)) as usize, -2.0, 2.0);
    let want = reference::ssm_conv(4, 96, 3, 2, true, &window, &conv.weight);
    each_backend(|dev, name| {
        let out = dev.ssm_conv(&conv, &window).unwrap();
        let err = out.iter().zip(&want).map(|(o, r)| (*o as f64 - r).abs()).fold(0.0, f64::max);
        assert!(err < 1e-5, "max |err| {err} on {name}");
        // The same windows as a conv state plus new inputs.
        let row = (w - 1 + t) as usize;
        let mut state = Vec::new();
        let mut x_new = Vec::new();
        for r in 0..(b * c) as usize {
            state.extend_from_slice(&window[r * row..][..3]);
            x_new.extend_from_slice(&window[r * row + 3..][..t as usize]);
        }
        let got = dev.ssm_conv_cached(&conv, &x_new, &mut state, None).unwrap();
        assert_eq!(bits(&got), bits(&out), "in-place form on {name}");
    });
}

#[test]
fn a_sequence_is_batch_invariant_and_the_comparison_can_fail() {
    let needle = gdn(3, 64, 2, 1, 2, 1, false, true);
    let per = needle.state_len();
    let needle_state = uniform(4, per, -1.0, 1.0);
    each_backend(|dev, name| {
        // Alone, in slot 0.
        let mut alone_cache = needle_state.clone();
        let alone = dev.gated_delta_net_cached(&needle, &mut alone_cache, Some(&[0]), true).unwrap();
        for (b, pos) in [(1u32, 0u32), (2, 1), (8, 5), (33, 17)] {
            let mut batch = gdn(100 + b as u64, 64, 2, 1, 2, b, false, true);
            // Put the needle at `pos`: every per-sequence input and its state.
            let splice = |dst: &mut Vec<f32>, src: &[f32]| dst[pos as usize * src.len()..][..src.len()].copy_from_slice(src);
            splice(&mut batch.q, &needle.q);
            splice(&mut batch.k, &needle.k);
            splice(&mut batch.v, &needle.v);
            splice(&mut batch.g, &needle.g);
            splice(&mut batch.beta, &needle.beta);
            batch.raw_gates = needle.raw_gates.clone();
            let n_slots = b + 3;
            let slots = shuffled_slots(b as u64, n_slots, b);
            let mut cache = uniform(200 + b as u64, n_slots as usize * per, -1.0, 1.0);
            let slot = slots[pos as usize] as usize;
            cache[slot * per..][..per].copy_from_slice(&needle_state);
            let r = dev.gated_delta_net_cached(&batch, &mut cache, Some(&slots), true).unwrap();
            let out_len = needle.v.len();
            assert_eq!(bits(&r.out[pos as usize * out_len..][..out_len]), bits(&alone.out), "B {b}: needle output on {name}");
            assert_eq!(bits(&cache[slot * per..][..per]), bits(&alone_cache), "B {b}: needle state on {name}");
            // Negative control: the same call with one of the needle's v values 10⁻³ off.
            let mut control = batch.clone();
            let at = pos as usize * needle.v.len();
            control.v[at] += 1e-3;
            cache[slot * per..][..per].copy_from_slice(&needle_state);
            let c = dev.gated_delta_net_cached(&control, &mut cache, Some(&slots), true).unwrap();
            assert_ne!(bits(&c.out[pos as usize * out_len..][..out_len]), bits(&alone.out), "B {b}: the control did not change the bits on {name}");
        }
        println!("needle in B = 1, 2, 8, 33 on {name}: bitwise equal; the control differs");
    });
}

#[test]
fn one_call_of_t_tokens_equals_t_calls_of_one_token() {
    for (s, kda) in [(128u32, true), (32, false)] {
        let x = gdn(21, s, 2, 2, 5, 2, kda, false);
        let per = x.state_len();
        let cache0 = uniform(22, 2 * per, -1.0, 1.0);
        each_backend(|dev, name| {
            let mut whole_cache = cache0.clone();
            let whole = dev.gated_delta_net_cached(&x, &mut whole_cache, Some(&[1, 0]), true).unwrap();
            let mut step_cache = cache0.clone();
            let mut outs = vec![Vec::new(); 2];
            for t in 0..5 {
                let one = token(&x, t);
                let r = dev.gated_delta_net_cached(&one, &mut step_cache, Some(&[1, 0]), true).unwrap();
                if t == 3 {
                    // Negative control: four tokens' state is not five tokens' state.
                    assert_ne!(bits(&step_cache), bits(&whole_cache), "S {s}: four steps equal five on {name}");
                }
                let o = (s * 2) as usize;
                for (b, seq) in outs.iter_mut().enumerate() {
                    seq.extend_from_slice(&r.out[b * o..][..o]);
                }
            }
            let stepped: Vec<f32> = outs.concat();
            assert_eq!(bits(&stepped), bits(&whole.out), "S {s}: outputs on {name}");
            assert_eq!(bits(&step_cache), bits(&whole_cache), "S {s}: states on {name}");
            println!("S {s} kda {kda} on {name}: 1 × 5 tokens = 5 × 1 token, bitwise");
        });
    }
}

/// Token `t` of every sequence of `x`, as a one-token call.
fn token(x: &GdnInputs, t: u32) -> GdnInputs {
    let (tn, b) = (x.n_tokens as usize, x.n_seqs as usize);
    let pick = |v: &[f32]| -> Vec<f32> {
        let per = v.len() / (b * tn);
        (0..b).flat_map(|i| v[(i * tn + t as usize) * per..][..per].to_vec()).collect()
    };
    GdnInputs { n_tokens: 1, q: pick(&x.q), k: pick(&x.k), v: pick(&x.v), g: pick(&x.g), beta: pick(&x.beta), ..x.clone() }
}

#[test]
fn gdn_matches_its_f64_reference_on_every_backend() {
    let x = gdn(31, 128, 2, 1, 3, 2, true, true);
    let state = uniform(32, 2 * x.state_len(), -1.0, 1.0);
    let (want_out, want_state) = reference::gated_delta_net(&x, &state);
    let mut first: Option<(Vec<u32>, Vec<u32>)> = None;
    each_backend(|dev, name| {
        let r = dev.gated_delta_net(&x, &state).unwrap();
        let st = r.state.unwrap();
        let (nmse_o, _) = onekernel_ops::attention::reference::compare(&r.out, &want_out);
        let (nmse_s, _) = onekernel_ops::attention::reference::compare(&st, &want_state);
        println!("S 128 KDA raw gates on {name}: NMSE out {nmse_o:.2e}, state {nmse_s:.2e}");
        assert!(nmse_o < 1e-10 && nmse_s < 1e-10, "{name}: {nmse_o} {nmse_s}");
        let got = (bits(&r.out), bits(&st));
        match &first {
            None => first = Some(got),
            Some(f) => assert_eq!(&got, f, "{name} differs from the interpreter"),
        }
    });
}

#[test]
fn ssm_scan_matches_its_f64_reference_on_every_backend() {
    for (mamba2, h, p, n, g) in [(true, 4u32, 16u32, 32u32, 2u32), (false, 48, 1, 16, 1)] {
        let (t, b) = (3u32, 3u32);
        let u = |x: u32| x as usize;
        let s = ScanInputs {
            n_heads: h,
            head_dim: p,
            d_state: n,
            n_groups: g,
            n_tokens: t,
            n_seqs: b,
            state: uniform(1, u(5 * h * p * n), -1.0, 1.0),
            x: uniform(2, u(b * t * h * p), -1.0, 1.0),
            dt: uniform(3, u(b * t * h), -4.0, 24.0),
            a: uniform(4, u(if mamba2 { h } else { h * n }), -2.0, -0.05),
            b: uniform(5, u(b * t * g * n), -1.0, 1.0),
            c: uniform(6, u(b * t * g * n), -1.0, 1.0),
            ids: vec![4, 0, 2],
        };
        let (want_y, want_state) = reference::ssm_scan(&s);
        let mut first: Option<Vec<u32>> = None;
        each_backend(|dev, name| {
            let r = dev.ssm_scan(&s).unwrap();
            let (ny, my) = onekernel_ops::attention::reference::compare(&r.y, &want_y);
            let (ns, ms) = onekernel_ops::attention::reference::compare(&r.state, &want_state);
            println!("ssm_scan mamba2 {mamba2} on {name}: y NMSE {ny:.2e} max {my:.2e}, state NMSE {ns:.2e} max {ms:.2e}");
            assert!(ny < 1e-11 && ns < 1e-11, "{name}");
            let got = [bits(&r.y), bits(&r.state)].concat();
            match &first {
                None => first = Some(got),
                Some(f) => assert!(&got == f, "{name} differs from the interpreter"),
            }
        });
    }
}

fn rejected(e: LinearError, argument: &str) -> String {
    match &e {
        LinearError::Invalid { argument: a, .. } => assert_eq!(*a, argument, "{e}"),
        other => panic!("expected a rejection of `{argument}`, got {other}"),
    }
    e.to_string()
}

#[test]
fn bad_input_is_rejected_before_launch_naming_the_argument() {
    let (m, artifacts) = (manifest(), generated());
    // The interpreter would fault on a bad launch; these must not get that far.
    let mut cpu = onekernel_tests::harness::cpu();
    let mut dev = Device::new(&mut cpu, &m, &artifacts);
    let x = gdn(1, 64, 4, 2, 1, 2, false, false);
    let state = vec![0.0; 2 * x.state_len()];
    let mut bad = gdn(1, 64, 4, 2, 1, 2, false, false);
    bad.s_v = 48;
    let e = rejected(dev.gated_delta_net(&bad, &state).unwrap_err(), "s_v");
    assert!(e.contains("gated_delta_net") && e.contains("48") && e.contains("16, 32, 64 or 128"), "{e}");
    let mut bad = x.clone();
    bad.n_k_heads = 3;
    rejected(dev.gated_delta_net(&bad, &state).unwrap_err(), "n_heads");
    let mut bad = x.clone();
    bad.n_tokens = 0;
    rejected(dev.gated_delta_net(&bad, &state).unwrap_err(), "n_tokens");
    rejected(dev.gated_delta_net(&x, &state[1..]).unwrap_err(), "state");
    let mut cache = vec![0.0; 3 * x.state_len()];
    let e = rejected(dev.gated_delta_net_cached(&x, &mut cache, Some(&[0, 3]), true).unwrap_err(), "slots");
    assert!(e.contains("slots[1] = 3"), "{e}");
    let e = rejected(dev.gated_delta_net_cached(&x, &mut cache, Some(&[2, 2]), true).unwrap_err(), "slots");
    assert!(e.contains("twice"), "{e}");
    rejected(dev.gated_delta_net_cached(&x, &mut cache, Some(&[-1, 0]), true).unwrap_err(), "slots");
    rejected(dev.gated_delta_net_cached(&x, &mut vec![0.0; 100], None, true).unwrap_err(), "state");
    let mut short = x.clone();
    short.q.pop();
    rejected(dev.gated_delta_net(&short, &state).unwrap_err(), "q");
    let conv = ConvInputs { d_conv: 5, channels: 8, n_tokens: 1, n_seqs: 1, silu: false, weight: vec![0.0; 40] };
    rejected(dev.ssm_conv(&conv, &[0.0; 40]).unwrap_err(), "d_conv");
    let conv = ConvInputs { d_conv: 4, ..conv };
    rejected(dev.ssm_conv(&conv, &[0.0; 40]).unwrap_err(), "weight");
    let conv = ConvInputs { weight: vec![0.0; 32], ..conv };
    rejected(dev.ssm_conv_cached(&conv, &[0.0; 8], &mut vec![0.0; 24], Some(&[1])).unwrap_err(), "slots");
    let conv0 = ConvInputs { n_tokens: 0, ..conv };
    rejected(dev.ssm_conv(&conv0, &[0.0; 24]).unwrap_err(), "n_tokens");
    // Nothing above reached the backend.
    assert!(dev.last_times().is_empty());
}
