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
//! reading stored accumulators without a barrier, two groups sharing an element-access
//! scratch. Element access (`tile_get`, `tile_set`, `tile_coords`, the slot reductions)
//! is checked against plain Rust on every backend; each backend holds its slots in its
//! own layout, so one that misplaced a slot fails. Negative controls: a transposed
//! operand fails the bound; a backend's bits with one accumulator perturbed fail it.

use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::cpu::{self, Fault, InterpError};
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch};
use onekernel_tests::harness::{cpu, gpu_backends, msl_emu_or_skip};
use onekernel_tests::tiles::{error, f16_words, normal_halves, Generated, NMSE_BOUND};
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

    /// Element access, each group on its own 16 × 16 tile of `c`: slots read with their
    /// coordinates and written back (`2c + i/4 + j/16` at (i, j)); each row's maximum,
    /// each row's sum and the tile's maximum broadcast to their slots; the slots as an
    /// A operand (rounded to f16) times the identity. Five tiles per group into `out`.
    #[kernel(workgroup = 64, fast)]
    pub fn tile_elements(#[len(512)] c: &[f32], #[len(128)] eye: &[u32], #[len(2560)] out: &mut [f32]) {
        let sc = shared::<f32, 640>();
        let sh = shared::<u32, 384>();
        let acc = tile_acc();
        let ta = tile_a();
        let tb = tile_b();
        let g = local_id().x / 32;
        let mut v = [0.0; 8];
        let mut w = [0.0; 8];
        let mut rows = [0u32; 8];
        let mut cols = [0u32; 8];
        tile_load(acc, c, g * 256, 16, false);
        tile_coords(rows, cols);
        tile_get(v, acc, sc, g * 320, 20);
        for e in 0..8u32 {
            w[e] = v[e] * 2.0 + (rows[e] as f32) * 0.25 + (cols[e] as f32) * 0.0625;
        }
        tile_set(acc, w, sc, g * 320, 20);
        tile_store(acc, out, g * 1280, 16, false);
        for e in 0..8u32 {
            w[e] = v[e];
        }
        tile_row_max(w);
        tile_set(acc, w, sc, g * 320, 20);
        tile_store(acc, out, g * 1280 + 256, 16, false);
        for e in 0..8u32 {
            w[e] = v[e];
        }
        tile_row_sum(w);
        tile_set(acc, w, sc, g * 320, 20);
        tile_store(acc, out, g * 1280 + 512, 16, false);
        for e in 0..8u32 {
            w[e] = v[e];
        }
        tile_all_max(w);
        tile_set(acc, w, sc, g * 320, 20);
        tile_store(acc, out, g * 1280 + 768, 16, false);
        // f16 rows 24 apart: 384 f16 values (192 words) per group.
        tile_set(ta, v, sh, g * 384, 24);
        tile_load(tb, eye, 0, 16, false);
        tile_fill(acc, 0.0);
        tile_mma(acc, ta, tb);
        tile_store(acc, out, g * 1280 + 1024, 16, false);
    }

    /// One misuse per `mode` (1–6); mode 0 is correct.
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
        // 6: both groups take their slots through the same scratch.
        let mut v = [0.0; 8];
        tile_get(v, acc, sc, select(mode == 6, 0u32, g * 256), 16);
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
    Inputs { a: normal_halves(&mut r, 2048), b: normal_halves(&mut r, 2048), c: r.f32_vec(640, -4.0, 4.0), scale: r.range(0.5, 1.5) as f32 }
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

fn run(built: &Generated, be: &mut dyn Backend, x: &Inputs, layout: u32) -> Result<Vec<f32>, BackendError> {
    let km = built.manifest.kernel("tile_ops").unwrap();
    let mut args = Args::new()
        .buffer("a", HostBuffer::from_u32(&f16_words(&x.a)))
        .buffer("b", HostBuffer::from_u32(&f16_words(&x.b)))
        .buffer("c", HostBuffer::from_f32(&x.c))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 640))
        .scalar("layout", layout)
        .scalar("scale", x.scale);
    let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
    be.launch(&l, &mut args)?;
    Ok(args.get_buffer("out").unwrap().to_f32())
}

#[test]
fn every_tile_operation_in_every_layout_matches_the_rule_and_every_backend_matches_the_interpreter() {
    let built = Generated::new(vec![k::tile_ops().unwrap(), k::tile_faults().unwrap()], "tiles-ops");
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
}

/// What `tile_elements` writes, from plain Rust: per group the mapped tile, the row
/// maxima, the row sums (f64, rounded once), the tile's maximum, and the tile rounded to
/// f16; with `transposed`, the mapping's coordinates swapped and the columns' maxima in
/// place of the rows' (the negative control).
fn elements_expected(c: &[f32], transposed: bool) -> Vec<f32> {
    let mut out = vec![0f32; 2560];
    for g in 0..2 {
        let t = &c[g * 256..(g + 1) * 256];
        let all = t.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for i in 0..16 {
            let row: Vec<f32> = (0..16).map(|j| if transposed { t[j * 16 + i] } else { t[i * 16 + j] }).collect();
            let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let sum = t[i * 16..i * 16 + 16].iter().map(|&x| f64::from(x)).sum::<f64>() as f32;
            for j in 0..16 {
                let (ci, cj) = if transposed { (j, i) } else { (i, j) };
                let o = g * 1280 + i * 16 + j;
                out[o] = t[i * 16 + j] * 2.0 + ci as f32 * 0.25 + cj as f32 * 0.0625;
                out[o + 256] = max;
                out[o + 512] = sum;
                out[o + 768] = all;
                out[o + 1024] = onekernel_dsl::half::f16_to_f32(onekernel_dsl::half::f32_to_f16(t[i * 16 + j]));
            }
        }
    }
    out
}

/// Elements of `got` farther from `want` than the per-tile bound: exact for the mapping
/// and the maxima, 2^-20 of the row's Σ|c| for the sums (summed in the hardware's order),
/// exact for the f16 rounding.
fn elements_outside(got: &[f32], want: &[f32], c: &[f32]) -> usize {
    (0..2560)
        .filter(|&o| {
            let (g, part, at) = (o / 1280, (o % 1280) / 256, o % 256);
            let bound =
                if part == 2 { c[g * 256 + (at / 16) * 16..][..16].iter().map(|x| f64::from(x.abs())).sum::<f64>() * 2f64.powi(-20) } else { 0.0 };
            (f64::from(got[o]) - f64::from(want[o])).abs() > bound || got[o].is_nan()
        })
        .count()
}

#[test]
fn element_access_reads_and_writes_slots_at_their_coordinates_on_every_backend() {
    let built = Generated::new(vec![k::tile_elements().unwrap()], "tile-elements");
    let km = built.manifest.kernel("tile_elements").unwrap();
    // Values in ±4 with f16 rounding cases (ties, subnormals after rounding) among them.
    let mut r = Rng::new(7);
    let mut c = r.f32_vec(512, -4.0, 4.0);
    c[3] = 1.0 + 2f32.powi(-11);
    c[40] = -(1.0 + 3.0 * 2f32.powi(-11));
    c[300] = 3.0e-6;
    let eye: Vec<u16> = (0..256).map(|e| if e / 16 == e % 16 { 0x3c00 } else { 0 }).collect();
    let run = |be: &mut dyn Backend| -> Result<Vec<f32>, BackendError> {
        let mut args = Args::new()
            .buffer("c", HostBuffer::from_f32(&c))
            .buffer("eye", HostBuffer::from_u32(&f16_words(&eye)))
            .buffer("out", HostBuffer::zeros(StorageType::F32, 2560));
        let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [1, 1, 1] };
        be.launch(&l, &mut args)?;
        Ok(args.get_buffer("out").unwrap().to_f32())
    };
    let want = elements_expected(&c, false);
    let mut reference = onekernel_runtime::cpu::CpuBackend::new(built.kernels.clone());
    let interp = run(&mut reference).unwrap();
    assert_eq!(interp.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), "the interpreter");
    // Negative control: swapped coordinates and column maxima are far outside.
    let wrong = elements_expected(&c, true);
    assert!(elements_outside(&wrong, &want, &c) > 400, "a transposed reading passes");
    let mut others: Vec<Box<dyn Backend>> = gpu_backends();
    if let Some(e) = msl_emu_or_skip() {
        others.push(Box::new(e));
    }
    for be in others.iter_mut() {
        let name = be.name().to_string();
        match run(be.as_mut()) {
            Ok(got) => {
                let outside = elements_outside(&got, &want, &c);
                assert_eq!(outside, 0, "{name}: {outside} elements outside the bound");
                println!("{name}: element access matches the rule (get, set, coordinates, row max and sum, tile max, f16 operand)");
            }
            Err(BackendError::Unsupported { reason, .. }) => {
                assert!(reason.contains("register tiles"), "{name}: {reason}");
                println!("SKIPPED on {name}: {reason}");
            }
            Err(e) => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn lavapipe_reports_tiles_unsupported_instead_of_running_them() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let built = Generated::new(vec![k::tile_ops().unwrap(), k::tile_faults().unwrap()], "tiles-lavapipe");
    let x = inputs(1);
    match run(&built, &mut vk, &x, 0) {
        Err(BackendError::Unsupported { reason, .. }) => {
            assert!(reason.contains("cooperative"), "{reason}");
            println!("{}: {reason}", vk.info().device);
        }
        Ok(_) if !vk.info().device.contains("llvmpipe") => println!("{} runs tiles", vk.info().device),
        other => panic!("lavapipe: expected Unsupported, got {other:?}"),
    }
}

#[test]
fn misuse_is_a_fault_not_undefined_behaviour() {
    let k = k::tile_faults().unwrap();
    let halves: Vec<u16> = (0..256).map(|i| 0x3c00 + i as u16).collect();
    let fault = |mode: u32| {
        let mut args = Args::new()
            .buffer("a", HostBuffer::from_u32(&f16_words(&halves)))
            .buffer("out", HostBuffer::zeros(StorageType::F32, 256))
            .scalar("mode", mode);
        match cpu::run(&k, &mut args, [1, 1, 1]) {
            Err(InterpError::Fault { fault, .. }) => fault,
            other => panic!("mode {mode}: expected a fault, got {other:?}"),
        }
    };
    let mut ok = Args::new()
        .buffer("a", HostBuffer::from_u32(&f16_words(&halves)))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 256))
        .scalar("mode", 0u32);
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
    match fault(6) {
        Fault::DataRace { array, .. } => assert_eq!(array, "sc"),
        other => panic!("mode 6: expected a data race on the shared scratch, got {other:?}"),
    }
    let msg = InterpError::Fault {
        site: Box::new(cpu::Site { kernel: "tile_faults".into(), location: String::new(), function: None, group: [0; 3], invocation: 0 }),
        fault: fault(3),
    }
    .to_string();
    assert!(msg.contains("tile_mma") && msg.contains("8 of the 32"), "{msg}");
    let _ = cpu();
}
