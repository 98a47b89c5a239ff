//! Random differential testing: seeded draws of shapes, options and special values
//! (lengths of 1, primes, workgroup boundaries, NaN, ±∞, subnormals) for several
//! kernel families, each run on the interpreter and on every other backend present
//! (lavapipe and msl-emu in CI, CUDA and NVIDIA Vulkan on the GPU machine), whose
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
