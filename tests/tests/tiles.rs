//! Register tiles, operation by operation: `tile_load` (f16 operands by rows and by
//! columns, f32 accumulators, each from shared memory and from a buffer), `tile_mma`
//! (two products, k = 32), `tile_scale`, `tile_fill` and `tile_store` (to shared memory
//! and to a buffer, by rows and by columns), in every combination of layouts.
//!
//! The interpreter is checked bitwise against plain Rust written from the documented
//! rule (each accumulator plus its 16 exact products summed in f64 in inner order,
//! rounded once to f32); every other backend present — msl-emu, CUDA (`mma.sync`),
//! NVIDIA's Vulkan (cooperative matrices) — against the interpreter within NMSE 1e-12 and
//! a per-element bound of 2^-19 · (|c| + Σ|a·b|) · |scale| (f32 sums of exact f16
//! products, in the hardware's order). A backend without tiles (lavapipe: no
//! cooperative matrices) must report the kernel unsupported, never a wrong answer.
//! Misuse is a fault in the interpreter: operands that differ within a group, misaligned
//! rows, a group that is not whole, a tile read before it is written, another group
//! reading stored accumulators without a barrier. Negative controls: a transposed
//! operand fails the bound; a backend's bits with one accumulator perturbed fail it.

use onekernel_codegen::Builder;
use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::cpu::{self, Fault, InterpError};
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch};
use onekernel_tests::harness::{cpu, gpu_backends, msl_emu_or_skip};
use onekernel_tests::Rng;

mod k {
    use onekernel_macros::kernel;

    /// Two groups; each loads its accumulators (`layout` bit 2: by columns) from shared
    /// memory or (bit 5) straight from `c`, adds two products of A (16 × 32; bit 0: by
    /// columns) and B (32 × 16; bit 1: by columns) read from shared memory or (bit 3)
    /// straight from the buffers, scales them, and stores them to `out` directly or
    /// (bit 4) through shared memory.
    #[kernel(workgroup = 64, fast)]
    pub fn tile_ops(
        #[len(1024)] a: &[u32],
        #[len(1024)] b: &[u32],
        #[len(640)] c: &[f32],
        #[len(640)] out: &mut [f32],
        #[push] layout: u32,
        #[push] scale: f32,
    ) {
        let sa = shared::<u32, 1024>();
        let sb = shared::<u32, 1024>();
        let sc = shared::<f32, 640>();
        let acc = tile_acc();
        let ta = tile_a();
        let tb = tile_b();
        let t = local_id().x;
        let g = t / 32;
        for i in (t..1024u32).step_by(64) {
            sa[i] = a[i];
            sb[i] = b[i];
        }
        for i in (t..640u32).step_by(64) {
            sc[i] = c[i];
        }
        barrier();
        let a_col = (layout & 1) != 0;
        let b_col = (layout & 2) != 0;
        let c_col = (layout & 4) != 0;
        let from_buffer = (layout & 8) != 0;
        let direct = (layout & 16) == 0;
        let acc_from_buffer = (layout & 32) != 0;
        // f16 values: A by rows 40 apart or by columns 24 apart; B by rows 24 apart or
        // by columns 40 apart; each group's 1024 values from g · 1024.
        let a_s = select(a_col, 24u32, 40u32);
        let b_s = select(b_col, 40u32, 24u32);
        if acc_from_buffer {
            if c_col {
                tile_load(acc, c, g * 320, 20, true);
            } else {
                tile_load(acc, c, g * 320, 20, false);
            }
        } else if c_col {
            tile_load(acc, sc, g * 320, 20, true);
        } else {
            tile_load(acc, sc, g * 320, 20, false);
        }
        for kk in 0..2u32 {
            let ai = g * 1024 + kk * select(a_col, 16 * a_s, 16u32);
            let bi = g * 1024 + kk * select(b_col, 16u32, 16 * b_s);
            if from_buffer {
                if a_col {
                    tile_load(ta, a, ai, a_s, true);
                } else {
                    tile_load(ta, a, ai, a_s, false);
                }
                if b_col {
                    tile_load(tb, b, bi, b_s, true);
                } else {
                    tile_load(tb, b, bi, b_s, false);
                }
            } else {
                if a_col {
                    tile_load(ta, sa, ai, a_s, true);
                } else {
                    tile_load(ta, sa, ai, a_s, false);
                }
                if b_col {
                    tile_load(tb, sb, bi, b_s, true);
                } else {
                    tile_load(tb, sb, bi, b_s, false);
                }
            }
            tile_mma(acc, ta, tb);
        }
        tile_scale(acc, scale);
        if direct {
            if c_col {
                tile_store(acc, out, g * 320, 20, true);
            } else {
                tile_store(acc, out, g * 320, 20, false);
            }
        } else {
            if c_col {
                tile_store(acc, sc, g * 320, 20, true);
            } else {
                tile_store(acc, sc, g * 320, 20, false);
            }
            // The group's own stores need no barrier.
            for i in (t % 32..320u32).step_by(32) {
                out[g * 320 + i] = sc[g * 320 + i];
            }
        }
    }

    /// One misuse per `mode` (1–5); mode 0 is correct.
    #[kernel(workgroup = 64, fast)]
    pub fn tile_faults(#[len(128)] a: &[u32], #[len(256)] out: &mut [f32], #[push] mode: u32) {
        let sc = shared::<f32, 512>();
        let acc = tile_acc();
        let ta = tile_a();
        let tb = tile_b();
        let t = local_id().x;
        let g = t / 32;
        // 1: one invocation passes another fill value; 2: an A index that is not a
        // multiple of 8; 4: the product before the accumulators are written.
        let v = select(mode == 1 && t % 32 == 5, 2.0, 1.0);
        if mode != 4 {
            tile_fill(acc, v);
        }
        tile_load(ta, a, select(mode == 2, 4u32, 0u32), 8, false);
        tile_load(tb, a, 0, 8, true);
        if mode == 3 {
            // Only part of group 1 reaches the product.
            if t < 40 {
                tile_mma(acc, ta, tb);
            }
        } else {
            tile_mma(acc, ta, tb);
        }
        tile_store(acc, sc, g * 256, 16, false);
        // A stored tile is still the group's: storing it again is no fault.
        tile_store(acc, sc, g * 256, 16, false);
        // 5: reads the other group's accumulators without a barrier.
        let own = g * 256 + (t % 32) * 8;
        let read = select(mode == 5, (own + 256) % 512, own);
        for e in 0..8u32 {
            out[(g * 256 + (t % 32) * 8 + e) % 256] = sc[read + e];
        }
    }
}

struct Inputs {
    a: Vec<u16>,
    b: Vec<u16>,
    c: Vec<f32>,
    scale: f32,
}

fn inputs(seed: u64) -> Inputs {
    let mut r = Rng::new(seed);
    // Normal f16 values in ±[1/8, 2): exact products, sums that round in f32.
    let half = |r: &mut Rng| (r.next_u32() as u16 & 0x8fff) | 0x3000;
    Inputs {
        a: (0..2048).map(|_| half(&mut r)).collect(),
        b: (0..2048).map(|_| half(&mut r)).collect(),
        c: r.f32_vec(640, -4.0, 4.0),
        scale: r.range(0.5, 1.5) as f32,
    }
}

fn words(h: &[u16]) -> Vec<u32> {
    h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect()
}

/// Plain Rust from the documented rule, with each element's bound scale
/// (|c| + Σ|a·b|) · |scale|: `out` after `tile_ops` with `layout`.
fn expected(x: &Inputs, layout: u32) -> (Vec<f32>, Vec<f64>) {
    let (a_col, b_col, c_col, direct) = (layout & 1 != 0, layout & 2 != 0, layout & 4 != 0, layout & 16 == 0);
    let mut out = if direct { vec![0.0f32; 640] } else { x.c.clone() };
    let mut mag = vec![0.0f64; 640];
    for g in 0..2 {
        for i in 0..16 {
            for j in 0..16 {
                let at = g * 320 + if c_col { j * 20 + i } else { i * 20 + j };
                let mut s = x.c[at];
                let mut m = f64::from(s.abs());
                for kt in 0..2 {
                    let mut sum = f64::from(s);
                    for k in 0..16 {
                        let kk = 16 * kt + k;
                        let av = f16_to_f32(x.a[g * 1024 + if a_col { kk * 24 + i } else { i * 40 + kk }]);
                        let bv = f16_to_f32(x.b[g * 1024 + if b_col { j * 40 + kk } else { kk * 24 + j }]);
                        sum += f64::from(av) * f64::from(bv);
                        m += f64::from((av * bv).abs());
                    }
                    s = sum as f32;
                }
                out[at] = s * x.scale;
                mag[at] = m * f64::from(x.scale.abs());
            }
        }
    }
    (out, mag)
}

/// `tile_ops` built once (codegen into a temporary directory).
struct Built {
    kernels: Vec<onekernel_dsl::ir::Kernel>,
    manifest: Manifest,
    dir: std::path::PathBuf,
}

fn build(tag: &str) -> Built {
    let kernels = vec![k::tile_ops().unwrap(), k::tile_faults().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-tiles-{tag}-{}", std::process::id()));
    let g = kernels.iter().fold(Builder::new(), |b, k| b.kernel(k.clone())).out_dir(&dir).write().unwrap();
    let manifest: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    Built { kernels, manifest, dir }
}

fn run(built: &Built, be: &mut dyn Backend, x: &Inputs, layout: u32) -> Result<Vec<f32>, BackendError> {
    let km = built.manifest.kernel("tile_ops").unwrap();
    let mut args = Args::new()
        .buffer("a", HostBuffer::from_u32(&words(&x.a)))
        .buffer("b", HostBuffer::from_u32(&words(&x.b)))
        .buffer("c", HostBuffer::from_f32(&x.c))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 640))
        .scalar("layout", layout)
        .scalar("scale", x.scale);
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    be.launch(&l, &mut args)?;
    Ok(args.get_buffer("out").unwrap().to_f32())
}

/// NMSE of `got` against `want` and the elements outside `2^-19 · mag`.
fn error(got: &[f32], want: &[f32], mag: &[f64]) -> (f64, usize) {
    let (mut num, mut den, mut outside) = (0.0f64, 0.0f64, 0usize);
    for i in 0..want.len() {
        let d = f64::from(got[i]) - f64::from(want[i]);
        num += d * d;
        den += f64::from(want[i]) * f64::from(want[i]);
        if d.abs() > mag[i] * 2f64.powi(-19) || got[i].is_nan() {
            outside += 1;
        }
    }
    (num / den, outside)
}

const NMSE_BOUND: f64 = 1e-12;

#[test]
fn every_tile_operation_in_every_layout_matches_the_rule_and_every_backend_matches_the_interpreter() {
    let built = build("ops");
    let mut reference = onekernel_runtime::cpu::CpuBackend::new(built.kernels.clone());
    let mut others: Vec<Box<dyn Backend>> = gpu_backends();
    if let Some(e) = msl_emu_or_skip() {
        others.push(Box::new(e));
    }
    let mut checked = vec![0usize; others.len()];
    for layout in 0..64u32 {
        let x = inputs(100 + u64::from(layout));
        let want = run(&built, &mut reference, &x, layout).unwrap();
        let (rule, mag) = expected(&x, layout);
        assert_eq!(want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), rule.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "layout {layout:06b}");
        // Negative control: A read with the other layout is far outside the bound.
        let (wrong, _) = expected(&x, layout ^ 1);
        let (nmse, outside) = error(&wrong, &want, &mag);
        assert!(nmse > NMSE_BOUND && outside > 0, "layout {layout:06b}: a transposed A passes (NMSE {nmse:.1e})");
        for (i, be) in others.iter_mut().enumerate() {
            let name = be.name().to_string();
            let got = match run(&built, be.as_mut(), &x, layout) {
                Ok(v) => v,
                Err(BackendError::Unsupported { reason, .. }) => {
                    assert!(reason.contains("register tiles"), "{name}: {reason}");
                    if layout == 0 {
                        println!("SKIPPED on {name}: {reason}");
                    }
                    continue;
                }
                Err(e) => panic!("{name}, layout {layout:06b}: {e}"),
            };
            let (nmse, outside) = error(&got, &want, &mag);
            assert!(nmse <= NMSE_BOUND && outside == 0, "{name}, layout {layout:06b}: NMSE {nmse:.2e}, {outside} elements outside the bound");
            // Negative control: one accumulator off by 2^-16 of its magnitude fails.
            let mut bad = got.clone();
            let at = if layout & 4 != 0 { 20 * 3 + 5 } else { 5 * 20 + 3 };
            bad[at] += (mag[at] * 2f64.powi(-16)) as f32;
            assert!(error(&bad, &want, &mag).1 > 0, "{name}: a perturbed accumulator stays within the bound");
            if layout == 63 {
                println!("{name}: 64 layouts within NMSE {NMSE_BOUND:e} and 2^-19 · (|c| + Σ|a·b|) of the interpreter (last NMSE {nmse:.2e})");
            }
            checked[i] += 1;
        }
    }
    for (be, n) in others.iter().zip(&checked) {
        assert!(*n == 0 || *n == 64, "{}: {n} of 64 layouts ran", be.name());
    }
    let _ = std::fs::remove_dir_all(&built.dir);
}

#[test]
fn lavapipe_reports_tiles_unsupported_instead_of_running_them() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let built = build("lavapipe");
    let x = inputs(1);
    match run(&built, &mut vk, &x, 0) {
        Err(BackendError::Unsupported { reason, .. }) => {
            assert!(reason.contains("cooperative"), "{reason}");
            println!("{}: {reason}", vk.info().device);
        }
        Ok(_) if !vk.info().device.contains("llvmpipe") => println!("{} runs tiles", vk.info().device),
        other => panic!("lavapipe: expected Unsupported, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&built.dir);
}

#[test]
fn misuse_is_a_fault_not_undefined_behaviour() {
    let k = k::tile_faults().unwrap();
    let halves: Vec<u16> = (0..256).map(|i| 0x3c00 + i as u16).collect();
    let fault = |mode: u32| {
        let mut args = Args::new()
            .buffer("a", HostBuffer::from_u32(&words(&halves)))
            .buffer("out", HostBuffer::zeros(StorageType::F32, 256))
            .scalar("mode", mode);
        match cpu::run(&k, &mut args, [1, 1, 1]) {
            Err(InterpError::Fault { fault, .. }) => fault,
            other => panic!("mode {mode}: expected a fault, got {other:?}"),
        }
    };
    let mut ok =
        Args::new().buffer("a", HostBuffer::from_u32(&words(&halves))).buffer("out", HostBuffer::zeros(StorageType::F32, 256)).scalar("mode", 0u32);
    cpu::run(&k, &mut ok, [1, 1, 1]).expect("mode 0 is correct");
    assert!(
        matches!(fault(1), Fault::TileOperandsDiffer { op: "tile_fill", group: 0, operand: "value", first: 0x3f80_0000, other: 0x4000_0000 }),
        "{:?}",
        fault(1)
    );
    assert!(matches!(fault(2), Fault::TileMisaligned { op: "tile_load", operand: "index", value: 4, multiple: 8 }), "{:?}", fault(2));
    assert!(matches!(fault(3), Fault::TilePartialGroup { op: "tile_mma", group: 1, active: 8 }), "{:?}", fault(3));
    assert!(matches!(&fault(4), Fault::TileUndefined { op: "tile_mma", tile, group: 0 } if tile == "acc"), "{:?}", fault(4));
    match fault(5) {
        Fault::DataRace { array, kind, first, .. } => {
            assert_eq!(array, "sc");
            assert_eq!(kind, "written then read");
            assert!(first.contains("tile") && first.contains("group"), "{first}");
        }
        other => panic!("mode 5: expected a data race, got {other:?}"),
    }
    let msg = InterpError::Fault {
        site: Box::new(cpu::Site { kernel: "tile_faults".into(), location: String::new(), function: None, group: [0; 3], invocation: 0 }),
        fault: fault(3),
    }
    .to_string();
    assert!(msg.contains("tile_mma") && msg.contains("8 of the 32"), "{msg}");
    let _ = cpu();
}
