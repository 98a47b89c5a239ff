//! Panels: `tile_mma_panel` (a group's A tile times 64 columns of B read straight from a
//! shared-memory panel, into four accumulators, or 128 into eight) and `tile_mma_wait`,
//! with `panel_word` placing the values (docs/DSL.md, "Panels").
//!
//! `panel_wide` does the same products with eight accumulators: A times the transpose of
//! a 128-row K panel (128 columns of B) and P times all 128 columns of the V panel.
//!
//! `panel_ops` multiplies a 64 × 128 A by the transpose of 64 of a 96-row K panel's rows
//! (the panel's rows are B's columns, as for `Q · Kᵀ`; the first row 0 or 32) and a
//! 64 × 64 P by a 64-row V panel (its rows are B's rows, as for `P · V`), each group of 32
//! invocations 16 rows of A. The interpreter is checked bitwise against plain Rust from
//! the documented rule (per `tile_mma_panel`, each accumulator plus its 16 exact products
//! summed in f64, rounded once to f32); every other backend present — msl-emu, CUDA
//! (`wgmma` on Hopper, `ldmatrix` and `mma.sync` with `ONEKERNEL_CUDA_WGMMA=0` or before
//! it), NVIDIA's Vulkan — against the interpreter within NMSE 1e-12 and 2^-19 · Σ|a·b|
//! per element. Negative controls: K read as rows (the other major) fails the bound; a
//! backend's bits with one element perturbed fail it. Misuse is a fault in the
//! interpreter: a tile read before the wait, a panel overwritten before it, a misaligned
//! panel, a workgroup that does not reach the product or the wait together. On CUDA with
//! `wgmma`, ptxas must report no serialized product for the panel kernels and one for
//! `panel_faults` (`Backend::compiler_warnings`).

use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::cpu::{self, Fault, InterpError};
use onekernel_runtime::cuda::Cuda;
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch};
use onekernel_tests::harness::{gpu_backends, msl_emu_or_skip};
use onekernel_tests::tiles::{error, f16_words, normal_halves, Generated, NMSE_BOUND};
use onekernel_tests::Rng;

mod k {
    use onekernel_macros::kernel;

    /// `s` (64 × 64) = A (64 × 128, rows 128 f16 apart in `a`) · the transpose of K
    /// panel rows `krow …` + 63 (`k`: 96 rows of 128 f16); `o` (64 × 128) = P (64 × 64
    /// in `p`) · V (`v`: 64 rows of 128). With `by_rows_k` the K panel is read as B's
    /// rows instead (the negative control's layout: its first 64 rows, columns 0 … 63).
    #[kernel(workgroup = 128, fast)]
    pub fn panel_ops(
        #[len(4096)] a: &[u32],
        #[len(6144)] k: &[u32],
        #[len(2048)] p: &[u32],
        #[len(4096)] v: &[u32],
        #[len(4096)] s: &mut [f32],
        #[len(8192)] o: &mut [f32],
        #[push] krow: u32,
    ) {
        // Panels of 96 and 64 rows of at most 68 words, each at a multiple of 256 words
        // (42.5 KiB in all: within NVIDIA Vulkan's 48).
        let kp = shared::<u32, 6528>();
        let vp = shared::<u32, 4352>();
        let q0 = tile_a();
        let q1 = tile_a();
        let q2 = tile_a();
        let q3 = tile_a();
        let q4 = tile_a();
        let q5 = tile_a();
        let q6 = tile_a();
        let q7 = tile_a();
        let p0 = tile_a();
        let p1 = tile_a();
        let p2 = tile_a();
        let p3 = tile_a();
        let s0 = tile_acc();
        let s1 = tile_acc();
        let s2 = tile_acc();
        let s3 = tile_acc();
        let o0 = tile_acc();
        let o1 = tile_acc();
        let o2 = tile_acc();
        let o3 = tile_acc();
        let o4 = tile_acc();
        let o5 = tile_acc();
        let o6 = tile_acc();
        let o7 = tile_acc();
        let t = local_id().x;
        let g = t / 32;
        // Each row's 16 chunks of 8 f16 values (4 words) where `panel_word` puts them.
        for i in (t..1536u32).step_by(128) {
            let r = i / 16;
            let c = i % 16;
            for w in 0..4u32 {
                kp[panel_word(r, c, 96) + w] = k[r * 64 + c * 4 + w];
            }
            if r < 64 {
                for w in 0..4u32 {
                    vp[panel_word(r, c, 64) + w] = v[r * 64 + c * 4 + w];
                }
            }
        }
        barrier();
        let ar = g * 16 * 128;
        tile_load(q0, a, ar, 128, false);
        tile_load(q1, a, ar + 16, 128, false);
        tile_load(q2, a, ar + 32, 128, false);
        tile_load(q3, a, ar + 48, 128, false);
        tile_load(q4, a, ar + 64, 128, false);
        tile_load(q5, a, ar + 80, 128, false);
        tile_load(q6, a, ar + 96, 128, false);
        tile_load(q7, a, ar + 112, 128, false);
        let pr = g * 16 * 64;
        tile_load(p0, p, pr, 64, false);
        tile_load(p1, p, pr + 16, 64, false);
        tile_load(p2, p, pr + 32, 64, false);
        tile_load(p3, p, pr + 48, 64, false);
        tile_fill(s0, 0.0);
        tile_fill(s1, 0.0);
        tile_fill(s2, 0.0);
        tile_fill(s3, 0.0);
        tile_fill(o0, 0.0);
        tile_fill(o1, 0.0);
        tile_fill(o2, 0.0);
        tile_fill(o3, 0.0);
        tile_fill(o4, 0.0);
        tile_fill(o5, 0.0);
        tile_fill(o6, 0.0);
        tile_fill(o7, 0.0);
        tile_mma_panel(s0, s1, s2, s3, q0, kp, 0, 96, krow, 0, false);
        tile_mma_panel(s0, s1, s2, s3, q1, kp, 0, 96, krow, 16, false);
        tile_mma_panel(s0, s1, s2, s3, q2, kp, 0, 96, krow, 32, false);
        tile_mma_panel(s0, s1, s2, s3, q3, kp, 0, 96, krow, 48, false);
        tile_mma_panel(s0, s1, s2, s3, q4, kp, 0, 96, krow, 64, false);
        tile_mma_panel(s0, s1, s2, s3, q5, kp, 0, 96, krow, 80, false);
        tile_mma_panel(s0, s1, s2, s3, q6, kp, 0, 96, krow, 96, false);
        tile_mma_panel(s0, s1, s2, s3, q7, kp, 0, 96, krow, 112, false);
        tile_mma_panel(o0, o1, o2, o3, p0, vp, 0, 64, 0, 0, true);
        tile_mma_panel(o4, o5, o6, o7, p0, vp, 0, 64, 0, 64, true);
        tile_mma_panel(o0, o1, o2, o3, p1, vp, 0, 64, 16, 0, true);
        tile_mma_panel(o4, o5, o6, o7, p1, vp, 0, 64, 16, 64, true);
        tile_mma_panel(o0, o1, o2, o3, p2, vp, 0, 64, 32, 0, true);
        tile_mma_panel(o4, o5, o6, o7, p2, vp, 0, 64, 32, 64, true);
        tile_mma_panel(o0, o1, o2, o3, p3, vp, 0, 64, 48, 0, true);
        tile_mma_panel(o4, o5, o6, o7, p3, vp, 0, 64, 48, 64, true);
        tile_mma_wait();
        let sr = g * 16 * 64;
        tile_store(s0, s, sr, 64, false);
        tile_store(s1, s, sr + 16, 64, false);
        tile_store(s2, s, sr + 32, 64, false);
        tile_store(s3, s, sr + 48, 64, false);
        let or = g * 16 * 128;
        tile_store(o0, o, or, 128, false);
        tile_store(o1, o, or + 16, 128, false);
        tile_store(o2, o, or + 32, 128, false);
        tile_store(o3, o, or + 48, 128, false);
        tile_store(o4, o, or + 64, 128, false);
        tile_store(o5, o, or + 80, 128, false);
        tile_store(o6, o, or + 96, 128, false);
        tile_store(o7, o, or + 112, 128, false);
    }

    /// `s` (64 × 128) = A (64 × 128) · the transpose of K panel rows 0 … 127 (`part` 0),
    /// or `o` (64 × 128) = P (64 × 64) · V (`part` 1), each product with eight
    /// accumulators; one panel array (34 KiB: within NVIDIA Vulkan's 48) holds K or V.
    #[kernel(workgroup = 128, fast)]
    pub fn panel_wide(
        #[len(4096)] a: &[u32],
        #[len(8192)] k: &[u32],
        #[len(2048)] p: &[u32],
        #[len(4096)] v: &[u32],
        #[len(8192)] s: &mut [f32],
        #[len(8192)] o: &mut [f32],
        #[push] part: u32,
    ) {
        let pan = shared::<u32, 8704>();
        let x0 = tile_a();
        let x1 = tile_a();
        let x2 = tile_a();
        let x3 = tile_a();
        let x4 = tile_a();
        let x5 = tile_a();
        let x6 = tile_a();
        let x7 = tile_a();
        let c0 = tile_acc();
        let c1 = tile_acc();
        let c2 = tile_acc();
        let c3 = tile_acc();
        let c4 = tile_acc();
        let c5 = tile_acc();
        let c6 = tile_acc();
        let c7 = tile_acc();
        let t = local_id().x;
        let g = t / 32;
        // K's 128 rows or V's 64, each row's 16 chunks where `panel_word` puts them.
        let rows = select(part == 0, 128u32, 64u32);
        for i in (t..rows * 16).step_by(128) {
            let r = i / 16;
            let c = i % 16;
            for w in 0..4u32 {
                if part == 0 {
                    pan[panel_word(r, c, 128) + w] = k[r * 64 + c * 4 + w];
                } else {
                    pan[panel_word(r, c, 64) + w] = v[r * 64 + c * 4 + w];
                }
            }
        }
        barrier();
        tile_fill(c0, 0.0);
        tile_fill(c1, 0.0);
        tile_fill(c2, 0.0);
        tile_fill(c3, 0.0);
        tile_fill(c4, 0.0);
        tile_fill(c5, 0.0);
        tile_fill(c6, 0.0);
        tile_fill(c7, 0.0);
        if part == 0 {
            let ar = g * 16 * 128;
            tile_load(x0, a, ar, 128, false);
            tile_load(x1, a, ar + 16, 128, false);
            tile_load(x2, a, ar + 32, 128, false);
            tile_load(x3, a, ar + 48, 128, false);
            tile_load(x4, a, ar + 64, 128, false);
            tile_load(x5, a, ar + 80, 128, false);
            tile_load(x6, a, ar + 96, 128, false);
            tile_load(x7, a, ar + 112, 128, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x0, pan, 0, 128, 0, 0, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x1, pan, 0, 128, 0, 16, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x2, pan, 0, 128, 0, 32, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x3, pan, 0, 128, 0, 48, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x4, pan, 0, 128, 0, 64, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x5, pan, 0, 128, 0, 80, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x6, pan, 0, 128, 0, 96, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x7, pan, 0, 128, 0, 112, false);
        } else {
            let pr = g * 16 * 64;
            tile_load(x0, p, pr, 64, false);
            tile_load(x1, p, pr + 16, 64, false);
            tile_load(x2, p, pr + 32, 64, false);
            tile_load(x3, p, pr + 48, 64, false);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x0, pan, 0, 64, 0, 0, true);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x1, pan, 0, 64, 16, 0, true);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x2, pan, 0, 64, 32, 0, true);
            tile_mma_panel(c0, c1, c2, c3, c4, c5, c6, c7, x3, pan, 0, 64, 48, 0, true);
        }
        tile_mma_wait();
        let or = g * 16 * 128;
        if part == 0 {
            tile_store(c0, s, or, 128, false);
            tile_store(c1, s, or + 16, 128, false);
            tile_store(c2, s, or + 32, 128, false);
            tile_store(c3, s, or + 48, 128, false);
            tile_store(c4, s, or + 64, 128, false);
            tile_store(c5, s, or + 80, 128, false);
            tile_store(c6, s, or + 96, 128, false);
            tile_store(c7, s, or + 112, 128, false);
        } else {
            tile_store(c0, o, or, 128, false);
            tile_store(c1, o, or + 16, 128, false);
            tile_store(c2, o, or + 32, 128, false);
            tile_store(c3, o, or + 48, 128, false);
            tile_store(c4, o, or + 64, 128, false);
            tile_store(c5, o, or + 80, 128, false);
            tile_store(c6, o, or + 96, 128, false);
            tile_store(c7, o, or + 112, 128, false);
        }
    }

    /// Each `mode` a misuse the interpreter reports (0: none): 1 a tile read before the
    /// wait, 2 the panel overwritten before it, 3 a panel at word 64, 4 half the workgroup
    /// multiplying, 5 half of it waiting, 6 eight accumulators over a panel's columns 64
    /// … 191 (past its 128).
    #[kernel(workgroup = 128, fast)]
    pub fn panel_faults(#[len(2048)] k: &[u32], #[len(4096)] out: &mut [f32], #[push] mode: u32) {
        let kp = shared::<u32, 4608>();
        let qa = tile_a();
        let s0 = tile_acc();
        let s1 = tile_acc();
        let s2 = tile_acc();
        let s3 = tile_acc();
        let s4 = tile_acc();
        let s5 = tile_acc();
        let s6 = tile_acc();
        let s7 = tile_acc();
        let t = local_id().x;
        let g = t / 32;
        for i in (t..4608u32).step_by(128) {
            kp[i] = k[i % 2048];
        }
        barrier();
        tile_load(qa, k, g * 256, 16, false);
        tile_fill(s0, 0.0);
        tile_fill(s1, 0.0);
        tile_fill(s2, 0.0);
        tile_fill(s3, 0.0);
        if mode == 3 {
            tile_mma_panel(s0, s1, s2, s3, qa, kp, 64, 64, 0, 0, false);
        } else if mode == 4 {
            if g < 2 {
                tile_mma_panel(s0, s1, s2, s3, qa, kp, 0, 64, 0, 0, false);
            }
        } else if mode == 6 {
            tile_fill(s4, 0.0);
            tile_fill(s5, 0.0);
            tile_fill(s6, 0.0);
            tile_fill(s7, 0.0);
            tile_mma_panel(s0, s1, s2, s3, s4, s5, s6, s7, qa, kp, 0, 64, 0, 64, true);
        } else {
            tile_mma_panel(s0, s1, s2, s3, qa, kp, 0, 64, 0, 0, false);
        }
        if mode == 1 {
            tile_scale(s0, 2.0);
        }
        if mode == 2 {
            barrier();
            kp[t] = kp[t] + 1;
            barrier();
        }
        if mode == 5 {
            if g < 2 {
                tile_mma_wait();
            }
        } else {
            tile_mma_wait();
        }
        tile_store(s0, out, g * 1024, 64, false);
        tile_store(s1, out, g * 1024 + 16, 64, false);
        tile_store(s2, out, g * 1024 + 32, 64, false);
        tile_store(s3, out, g * 1024 + 48, 64, false);
    }
}

struct Inputs {
    a: Vec<u16>,
    k: Vec<u16>,
    p: Vec<u16>,
    v: Vec<u16>,
}

fn inputs(seed: u64) -> Inputs {
    let mut r = Rng::new(seed);
    let mut half = |n: usize| normal_halves(&mut r, n);
    Inputs { a: half(64 * 128), k: half(96 * 128), p: half(64 * 64), v: half(64 * 128) }
}

/// `rows × cols` = A (rows × depth) · B, with `b(k, n)` giving B; the sum of each run
/// of 16 products in f64 added to the f32 value and rounded once (one `tile_mma_panel`),
/// and each element's Σ|a·b|.
fn product(a: &[u16], rows: usize, depth: usize, cols: usize, b: &dyn Fn(usize, usize) -> u16) -> (Vec<f32>, Vec<f64>) {
    let (mut out, mut mag) = (vec![0f32; rows * cols], vec![0f64; rows * cols]);
    for i in 0..rows {
        for n in 0..cols {
            let mut s = 0f32;
            for k0 in (0..depth).step_by(16) {
                let mut sum = f64::from(s);
                for k in k0..k0 + 16 {
                    let prod = f64::from(f16_to_f32(a[i * depth + k])) * f64::from(f16_to_f32(b(k, n)));
                    sum += prod;
                    mag[i * cols + n] += prod.abs();
                }
                s = sum as f32;
            }
            out[i * cols + n] = s;
        }
    }
    (out, mag)
}

/// What `panel_ops` writes (s then o) from the rule, with each element's Σ|a·b|; with
/// `k_by_rows`, K read as B's rows (the negative control).
fn expected(x: &Inputs, krow: usize, k_by_rows: bool) -> (Vec<f32>, Vec<f64>) {
    let kb = |k: usize, n: usize| if k_by_rows { x.k[(k % 96) * 128 + n] } else { x.k[(krow + n) * 128 + k] };
    let (mut s, mut sm) = product(&x.a, 64, 128, 64, &kb);
    let (o, om) = product(&x.p, 64, 64, 128, &|k, n| x.v[k * 128 + n]);
    s.extend(o);
    sm.extend(om);
    (s, sm)
}

fn run(built: &Generated, be: &mut dyn Backend, x: &Inputs, krow: u32) -> Result<Vec<f32>, BackendError> {
    let km = built.manifest.kernel("panel_ops").unwrap();
    let mut args = Args::new()
        .buffer("a", HostBuffer::from_u32(&f16_words(&x.a)))
        .buffer("k", HostBuffer::from_u32(&f16_words(&x.k)))
        .buffer("p", HostBuffer::from_u32(&f16_words(&x.p)))
        .buffer("v", HostBuffer::from_u32(&f16_words(&x.v)))
        .buffer("s", HostBuffer::zeros(StorageType::F32, 4096))
        .buffer("o", HostBuffer::zeros(StorageType::F32, 8192))
        .scalar("krow", krow);
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    be.launch(&l, &mut args)?;
    let mut out = args.get_buffer("s").unwrap().to_f32();
    out.extend(args.get_buffer("o").unwrap().to_f32());
    Ok(out)
}

/// Every backend's `run` against the interpreter's `want`: within NMSE and 2^-19 · Σ|a·b|
/// per element (`mag`), and each element of `perturb` off by 2^-16 of its magnitude
/// outside the bound (the negative control). A backend without register tiles skips.
fn check_backends(
    others: &mut [Box<dyn Backend>],
    want: &[f32],
    mag: &[f64],
    label: &str,
    perturb: &[usize],
    mut run: impl FnMut(&mut dyn Backend) -> Result<Vec<f32>, BackendError>,
) {
    for be in others.iter_mut() {
        let name = be.name().to_string();
        let got = match run(be.as_mut()) {
            Ok(v) => v,
            Err(BackendError::Unsupported { reason, .. }) => {
                assert!(reason.contains("register tiles"), "{name}: {reason}");
                println!("SKIPPED on {name}: {reason}");
                continue;
            }
            Err(e) => panic!("{name}, {label}: {e}"),
        };
        let (nmse, outside) = error(&got, want, mag);
        assert!(nmse <= NMSE_BOUND && outside == 0, "{name}, {label}: NMSE {nmse:.2e}, {outside} elements outside the bound");
        for &at in perturb {
            let mut bad = got.clone();
            bad[at] += (mag[at] * 2f64.powi(-16)) as f32;
            assert!(error(&bad, want, mag).1 > 0, "{name}: a perturbed element stays within the bound");
        }
        println!("{name} ({}), {label}: within NMSE {NMSE_BOUND:e} (NMSE {nmse:.2e}) and 2^-19 · Σ|a·b| of the interpreter", be.info().driver);
    }
}

#[test]
fn panel_products_match_the_rule_and_every_backend_matches_the_interpreter() {
    let built = Generated::new(vec![k::panel_ops().unwrap(), k::panel_faults().unwrap()], "panels-ops");
    let mut reference = onekernel_runtime::cpu::CpuBackend::new(built.kernels.clone());
    let mut others: Vec<Box<dyn Backend>> = gpu_backends();
    if let Some(e) = msl_emu_or_skip() {
        others.push(Box::new(e));
    }
    for krow in [0u32, 32] {
        let x = inputs(7 + u64::from(krow));
        let want = run(&built, &mut reference, &x, krow).unwrap();
        let (rule, mag) = expected(&x, krow as usize, false);
        assert_eq!(want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), rule.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "krow {krow}");
        // Negative control: K read as B's rows is far outside the bound.
        let (wrong, _) = expected(&x, krow as usize, true);
        let (nmse, outside) = error(&wrong, &want, &mag);
        assert!(nmse > NMSE_BOUND && outside > 0, "krow {krow}: K read by rows passes (NMSE {nmse:.1e})");
        // Negative control: one element of each product off by 2^-16 of its magnitude fails.
        let label = format!("krow {krow}");
        check_backends(&mut others, &want, &mag, &label, &[5 * 64 + 3, 4096 + 9 * 128 + 77], |be| run(&built, be, &x, krow));
    }
}

#[test]
fn panel_misuse_is_a_fault_not_undefined_behaviour() {
    let k = k::panel_faults().unwrap();
    let halves: Vec<u16> = (0..4096).map(|i| 0x3c00 + (i % 512) as u16).collect();
    let args = |mode: u32| {
        Args::new()
            .buffer("k", HostBuffer::from_u32(&f16_words(&halves)))
            .buffer("out", HostBuffer::zeros(StorageType::F32, 4096))
            .scalar("mode", mode)
    };
    cpu::run(&k, &mut args(0), [1, 1, 1]).expect("mode 0 is correct");
    let fault = |mode: u32| match cpu::run(&k, &mut args(mode), [1, 1, 1]) {
        Err(InterpError::Fault { fault, .. }) => fault,
        other => panic!("mode {mode}: expected a fault, got {other:?}"),
    };
    assert!(matches!(&fault(1), Fault::TilePending { op: "tile_scale", tile } if tile == "s0"), "{:?}", fault(1));
    assert!(matches!(&fault(2), Fault::PanelWrittenBeforeWait { panel, .. } if panel == "kp"), "{:?}", fault(2));
    assert!(matches!(fault(3), Fault::PanelOperand { operand: "base", value: 64, .. }), "{:?}", fault(3));
    assert!(matches!(fault(4), Fault::NonUniform { what: "tile_mma_panel", active: 64, expected: 128 }), "{:?}", fault(4));
    assert!(matches!(fault(5), Fault::NonUniform { what: "tile_mma_wait", active: 64, expected: 128 }), "{:?}", fault(5));
    assert!(matches!(fault(6), Fault::PanelOperand { operand: "col0", value: 64, .. }), "{:?}", fault(6));
    let msg = fault(1).to_string();
    assert!(msg.contains("tile_mma_wait"), "{msg}");
}

fn run_wide(built: &Generated, be: &mut dyn Backend, x: &Inputs, k128: &[u16], part: u32) -> Result<Vec<f32>, BackendError> {
    let km = built.manifest.kernel("panel_wide").unwrap();
    let mut args = Args::new()
        .buffer("a", HostBuffer::from_u32(&f16_words(&x.a)))
        .buffer("k", HostBuffer::from_u32(&f16_words(k128)))
        .buffer("p", HostBuffer::from_u32(&f16_words(&x.p)))
        .buffer("v", HostBuffer::from_u32(&f16_words(&x.v)))
        .buffer("s", HostBuffer::zeros(StorageType::F32, 8192))
        .buffer("o", HostBuffer::zeros(StorageType::F32, 8192))
        .scalar("part", part);
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    be.launch(&l, &mut args)?;
    Ok(args.get_buffer(if part == 0 { "s" } else { "o" }).unwrap().to_f32())
}

#[test]
fn wide_panel_products_match_the_rule_and_every_backend_matches_the_interpreter() {
    let built = Generated::new(vec![k::panel_wide().unwrap()], "panels-wide");
    let mut reference = onekernel_runtime::cpu::CpuBackend::new(built.kernels.clone());
    let mut others: Vec<Box<dyn Backend>> = gpu_backends();
    if let Some(e) = msl_emu_or_skip() {
        others.push(Box::new(e));
    }
    let x = inputs(11);
    let mut r = Rng::new(12);
    let k128 = normal_halves(&mut r, 128 * 128);
    for part in [0u32, 1] {
        let want = run_wide(&built, &mut reference, &x, &k128, part).unwrap();
        // B's column n, and the negative control's: the two 64-column halves exchanged
        // (a descriptor whose second half is the first).
        let rule = |swap: usize| {
            if part == 0 {
                product(&x.a, 64, 128, 128, &|k, n| k128[(n ^ swap) * 128 + k])
            } else {
                product(&x.p, 64, 64, 128, &|k, n| x.v[k * 128 + (n ^ swap)])
            }
        };
        let (exact, mag) = rule(0);
        assert_eq!(want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), exact.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "part {part}");
        let (wrong, _) = rule(64);
        let (nmse, outside) = error(&wrong, &want, &mag);
        assert!(nmse > NMSE_BOUND && outside > 0, "part {part}: halves exchanged pass (NMSE {nmse:.1e})");
        let label = format!("eight accumulators, part {part}");
        check_backends(&mut others, &want, &mag, &label, &[3 * 128 + 5, 40 * 128 + 100], |be| run_wide(&built, be, &x, &k128, part));
    }
}

/// The compiler's word reaches the kernel author: on CUDA with `wgmma` (sm_90a), ptxas's
/// warnings (docs/RUNTIME.md, "Compiler warnings") say no product of the panel kernels
/// is serialized ("Potential Performance Loss"; `panel_ops`, whose products alternate
/// between two sets of accumulators, gets waits injected, C7517, which are printed), and
/// that `panel_faults`, which multiplies under a branch that splits a warpgroup, has its
/// products serialized (the negative control). Elsewhere there is nothing to report.
#[test]
fn cuda_reports_serialized_products_and_none_for_the_panel_kernels() {
    let mut cuda = match Cuda::new() {
        Ok(c) => c,
        Err(e) => return println!("SKIPPED on CUDA (no NVIDIA GPU here): {e}"),
    };
    if !cuda.info().async_panels {
        return println!("SKIPPED on CUDA: panel products are not `wgmma` on {} (or ONEKERNEL_CUDA_WGMMA=0)", cuda.info().device);
    }
    let serialized = |w: &String| w.contains("Potential Performance Loss");
    let built = Generated::new(vec![k::panel_ops().unwrap(), k::panel_wide().unwrap(), k::panel_faults().unwrap()], "panels-warnings");
    let x = inputs(7);
    run(&built, &mut cuda, &x, 0).expect("panel_ops on CUDA");
    let k128: Vec<u16> = (0..128 * 128).map(|i| x.k[i % x.k.len()]).collect();
    run_wide(&built, &mut cuda, &x, &k128, 0).expect("panel_wide on CUDA");
    let clean = cuda.compiler_warnings();
    println!("CUDA, panel_ops and panel_wide: {clean:#?}");
    assert!(!clean.iter().any(serialized), "the panel kernels' products are serialized: {clean:?}");
    let km = built.manifest.kernel("panel_faults").unwrap();
    let mut args = Args::new()
        .buffer("k", HostBuffer::from_u32(&vec![0x3c00_3c00; 2048]))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 4096))
        .scalar("mode", 0u32);
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    cuda.launch(&l, &mut args).expect("panel_faults (mode 0) on CUDA");
    let warned: Vec<String> = cuda.compiler_warnings().into_iter().filter(|w| w.starts_with("panel_faults")).collect();
    println!("CUDA, panel_faults: {warned:#?}");
    assert!(warned.iter().any(serialized), "no serialization reported for panel_faults: {warned:?}");
}
