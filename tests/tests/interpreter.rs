//! Semantics of the reference interpreter: reductions and their fixed tree, shared
//! memory and barriers, divergence, and the faults it reports instead of undefined
//! behaviour. Every kernel here is written in the DSL and run with workgroup sizes
//! 32, 64, 128 and 256.

use onekernel_dsl::types::StorageType;
use onekernel_dsl::Kernel;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::{self, Fault, InterpError};
use onekernel_runtime::{Args, HostBuffer};
use onekernel_tests::Rng;

macro_rules! sized_kernels {
    ($($n:literal => $reduce:ident, $shared:ident, $diverge:ident);* $(;)?) => {$(
        /// Workgroup sum and max of one value per invocation.
        #[kernel(workgroup = $n)]
        fn $reduce(x: &[f32], sums: &mut [f32], maxes: &mut [f32]) {
            let v = x[global_id().x];
            let s = workgroup_sum(v);
            let m = workgroup_max(v);
            if local_id().x == 0 {
                sums[group_id().x] = s;
                maxes[group_id().x] = m;
            }
        }

        /// The classic shared-memory tree with barriers, written by hand.
        #[kernel(workgroup = $n)]
        fn $shared(x: &[f32], sums: &mut [f32]) {
            let s = shared::<f32, $n>();
            let t = local_id().x;
            s[t] = x[global_id().x];
            barrier();
            let mut stride = WORKGROUP_X / 2;
            while stride > 0 {
                if t < stride {
                    s[t] = s[t] + s[t + stride];
                }
                barrier();
                stride = stride / 2;
            }
            if t == 0 {
                sums[group_id().x] = s[0];
            }
        }

        /// Per-invocation control flow: a data-dependent loop with continue and break,
        /// nested ifs, and an early return for some invocations.
        #[kernel(workgroup = $n)]
        fn $diverge(x: &[u32], out: &mut [u32]) {
            let g = global_id().x;
            let v = x[g];
            if v % 7 == 3 {
                out[g] = 1000000;
                return;
            }
            let mut acc = 0u32;
            for i in 0..(v % 37) {
                if i % 3 == 1 {
                    continue;
                }
                if i * v > 500 {
                    acc += 7;
                    break;
                }
                acc += i ^ v;
            }
            let mut j = v;
            while j > 10 {
                j = j / 2;
                if j == 13 {
                    break;
                }
            }
            if acc > 50 {
                out[g] = acc + j;
            } else if acc > 20 {
                out[g] = acc * 2 + j;
            } else {
                out[g] = j;
            }
        }
    )*};
}

sized_kernels! {
    32 => reduce_32, shared_32, diverge_32;
    64 => reduce_64, shared_64, diverge_64;
    128 => reduce_128, shared_128, diverge_128;
    256 => reduce_256, shared_256, diverge_256;
}

type KernelFn = fn() -> Result<Kernel, onekernel_dsl::catalogue::CatalogueError>;
const SIZES: [(usize, KernelFn, KernelFn, KernelFn); 4] = [
    (32, reduce_32, shared_32, diverge_32),
    (64, reduce_64, shared_64, diverge_64),
    (128, reduce_128, shared_128, diverge_128),
    (256, reduce_256, shared_256, diverge_256),
];

fn tree_sum(v: &[f32]) -> f32 {
    let mut s = v.to_vec();
    let mut stride = s.len() / 2;
    while stride > 0 {
        for i in 0..stride {
            s[i] += s[i + stride];
        }
        stride /= 2;
    }
    s[0]
}

fn sequential_sum(v: &[f32]) -> f32 {
    v.iter().fold(0.0, |a, b| a + b)
}

fn adjacent_pairs_sum(v: &[f32]) -> f32 {
    let mut s = v.to_vec();
    while s.len() > 1 {
        s = s.chunks(2).map(|p| p[0] + p[1]).collect();
    }
    s[0]
}

fn run_reduce(k: &Kernel, x: &[f32], groups: usize) -> (Vec<f32>, Vec<f32>) {
    let mut args = Args::new()
        .buffer("x", HostBuffer::from_f32(x))
        .buffer("sums", HostBuffer::zeros(StorageType::F32, groups))
        .buffer("maxes", HostBuffer::zeros(StorageType::F32, groups));
    cpu::run(k, &mut args, [groups as u32, 1, 1]).unwrap();
    (args.get_buffer("sums").unwrap().to_f32(), args.get_buffer("maxes").unwrap().to_f32())
}

/// Values over many magnitudes, so that summation order shows in the bits.
fn wide_values(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let mag = 2f32.powi(rng.below(40) as i32 - 20);
            let sign = if rng.below(2) == 0 { 1.0 } else { -1.0 };
            sign * mag * (1.0 + rng.unit() as f32)
        })
        .collect()
}

#[test]
fn workgroup_sum_is_the_stride_halving_tree() {
    let mut rng = Rng::new(11);
    for (n, reduce, _, _) in SIZES {
        let k = reduce().unwrap();
        // Constructed so that other orders give other bits: 2^24 absorbs a lone 1,
        // but the tree first adds x[1] and x[n/2 + 1] to each other.
        let mut x = vec![0.0f32; n];
        x[0] = 16_777_216.0;
        x[1] = 1.0;
        x[n / 2 + 1] = 1.0;
        let (sums, _) = run_reduce(&k, &x, 1);
        assert_eq!(sums[0].to_bits(), tree_sum(&x).to_bits(), "n = {n}");
        assert_eq!(sums[0], 16_777_218.0);
        assert_ne!(sums[0].to_bits(), sequential_sum(&x).to_bits(), "sequential order would differ");
        assert_ne!(sums[0].to_bits(), adjacent_pairs_sum(&x).to_bits(), "adjacent pairing would differ");

        let groups = 16;
        let x = wide_values(&mut rng, n * groups);
        let (sums, maxes) = run_reduce(&k, &x, groups);
        let mut differs = 0;
        for g in 0..groups {
            let row = &x[g * n..(g + 1) * n];
            assert_eq!(sums[g].to_bits(), tree_sum(row).to_bits(), "n = {n}, group {g}");
            assert_eq!(maxes[g], row.iter().cloned().fold(f32::NEG_INFINITY, f32::max));
            differs += (sums[g].to_bits() != sequential_sum(row).to_bits()) as u32;
        }
        assert!(differs > 0, "inputs must be able to tell the orders apart");
    }
}

#[test]
fn hand_written_shared_memory_tree_with_barriers_equals_workgroup_sum() {
    let mut rng = Rng::new(12);
    for (n, reduce, shared, _) in SIZES {
        let groups = 8;
        let x = wide_values(&mut rng, n * groups);
        let (sums, _) = run_reduce(&reduce().unwrap(), &x, groups);
        let mut args = Args::new().buffer("x", HostBuffer::from_f32(&x)).buffer("sums", HostBuffer::zeros(StorageType::F32, groups));
        cpu::run(&shared().unwrap(), &mut args, [groups as u32, 1, 1]).unwrap();
        let manual = args.get_buffer("sums").unwrap().to_f32();
        for g in 0..groups {
            assert_eq!(manual[g].to_bits(), sums[g].to_bits(), "n = {n}, group {g}");
        }
    }
}

fn diverge_ref(v: u32) -> u32 {
    if v % 7 == 3 {
        return 1_000_000;
    }
    let mut acc = 0u32;
    for i in 0..(v % 37) {
        if i % 3 == 1 {
            continue;
        }
        if i.wrapping_mul(v) > 500 {
            acc = acc.wrapping_add(7);
            break;
        }
        acc = acc.wrapping_add(i ^ v);
    }
    let mut j = v;
    while j > 10 {
        j /= 2;
        if j == 13 {
            break;
        }
    }
    if acc > 50 {
        acc.wrapping_add(j)
    } else if acc > 20 {
        acc.wrapping_mul(2).wrapping_add(j)
    } else {
        j
    }
}

#[test]
fn divergent_control_flow_matches_per_invocation_rust() {
    let mut rng = Rng::new(13);
    for (n, _, _, diverge) in SIZES {
        let groups = 4;
        let x: Vec<u32> = (0..n * groups).map(|_| rng.below(5000)).collect();
        let mut args = Args::new().buffer("x", HostBuffer::from_u32(&x)).buffer("out", HostBuffer::zeros(StorageType::U32, n * groups));
        cpu::run(&diverge().unwrap(), &mut args, [groups as u32, 1, 1]).unwrap();
        let out = args.get_buffer("out").unwrap().to_u32();
        for (i, (&v, &o)) in x.iter().zip(&out).enumerate() {
            assert_eq!(o, diverge_ref(v), "n = {n}, invocation {i}, x = {v}");
        }
    }
}

/// Exchanges neighbours through shared memory; `sync` chooses whether a barrier
/// separates the write from the read.
#[kernel(workgroup = 64, variants(sync = [true, false]))]
fn neighbour_swap(x: &[f32], y: &mut [f32]) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    s[t] = x[t];
    if sync {
        barrier();
    }
    y[t] = s[t ^ 1];
}

#[test]
fn race_detector_catches_a_missing_barrier_and_accepts_the_fixed_kernel() {
    let k = neighbour_swap().unwrap();
    let x: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let mk = |sync: bool| Args::new().buffer("x", HostBuffer::from_f32(&x)).buffer("y", HostBuffer::zeros(StorageType::F32, 64)).scalar("sync", sync);
    let mut ok = mk(true);
    cpu::run(&k, &mut ok, [1, 1, 1]).unwrap();
    let y = ok.get_buffer("y").unwrap().to_f32();
    assert_eq!(y[0], 1.0);
    assert_eq!(y[1], 0.0);
    let err = cpu::run(&k, &mut mk(false), [1, 1, 1]).unwrap_err();
    match &err {
        InterpError::Fault { fault: Fault::DataRace { array, kind, .. }, site } => {
            assert_eq!(array, "s");
            assert_eq!(*kind, "written then read");
            assert_eq!(site.kernel, "neighbour_swap");
        }
        other => panic!("expected a data race, got {other}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("neighbour_swap") && msg.contains("interpreter.rs") && msg.contains("no barrier"), "{msg}");
}

#[kernel(workgroup = 32)]
fn reads_uninitialized_shared(y: &mut [f32]) {
    let s = shared::<f32, 32>();
    let t = local_id().x;
    if t > 0 {
        s[t] = 1.0;
    }
    barrier();
    y[t] = s[0];
}

#[test]
fn uninitialized_shared_memory_is_reported() {
    let mut args = Args::new().buffer("y", HostBuffer::zeros(StorageType::F32, 32));
    let err = cpu::run(&reads_uninitialized_shared().unwrap(), &mut args, [1, 1, 1]).unwrap_err();
    assert!(matches!(err, InterpError::Fault { fault: Fault::UninitializedShared { index: 0, .. }, .. }), "{err}");
}

#[kernel(workgroup = 32)]
fn copy_n(x: &[f32], y: &mut [f32], #[push] n: u32) {
    let i = global_id().x;
    if i < n {
        y[i] = x[i];
    }
}

#[test]
fn out_of_bounds_access_is_an_error_naming_kernel_buffer_and_index() {
    let k = copy_n().unwrap();
    let mut args = Args::new().buffer("x", HostBuffer::from_f32(&[1.0; 40])).buffer("y", HostBuffer::zeros(StorageType::F32, 64)).scalar("n", 64u32);
    let err = cpu::run(&k, &mut args, [2, 1, 1]).unwrap_err();
    match &err {
        InterpError::Fault { fault: Fault::OutOfBounds { target, index, len }, site } => {
            assert_eq!((target.as_str(), *index, *len), ("x", 40, 40));
            assert_eq!(site.group, [1, 0, 0]);
            assert_eq!(site.invocation, 8);
        }
        other => panic!("expected out of bounds, got {other}"),
    }
    assert!(err.to_string().contains("index 40 is out of bounds for `x` of length 40"), "{err}");
    // The same launch with a correct bound runs.
    let mut args = args.scalar("n", 40u32);
    cpu::run(&k, &mut args, [2, 1, 1]).unwrap();
    assert_eq!(args.get_buffer("y").unwrap().to_f32()[39], 1.0);
}

#[kernel(workgroup = 1)]
fn integer_ops(a: &[u32], out: &mut [u32], #[push] op: u32) {
    let x = a[0];
    let y = a[1];
    if op == 0 {
        out[0] = x / y;
    } else if op == 1 {
        out[0] = x << y;
    } else if op == 2 {
        out[0] = (f32::from_bits(x) as i32) as u32;
    } else {
        out[0] = x + y;
    }
}

#[test]
fn undefined_integer_operations_are_faults_and_wrapping_is_defined() {
    let k = integer_ops().unwrap();
    let run = |a: [u32; 2], op: u32| {
        let mut args = Args::new().buffer("a", HostBuffer::from_u32(&a)).buffer("out", HostBuffer::zeros(StorageType::U32, 1)).scalar("op", op);
        cpu::run(&k, &mut args, [1, 1, 1]).map(|_| args.get_buffer("out").unwrap().to_u32()[0])
    };
    assert_eq!(run([7, 2], 0).unwrap(), 3);
    assert!(matches!(run([7, 0], 0), Err(InterpError::Fault { fault: Fault::DivisionByZero, .. })));
    assert_eq!(run([1, 31], 1).unwrap(), 1 << 31);
    assert!(matches!(run([1, 32], 1), Err(InterpError::Fault { fault: Fault::ShiftOutOfRange { amount: 32 }, .. })));
    assert_eq!(run([(-7.9f32).to_bits(), 0], 2).unwrap(), (-7i32) as u32, "truncates toward zero");
    assert!(matches!(run([3e9f32.to_bits(), 0], 2), Err(InterpError::Fault { fault: Fault::ConversionOutOfRange { .. }, .. })));
    assert!(matches!(run([f32::NAN.to_bits(), 0], 2), Err(InterpError::Fault { fault: Fault::ConversionOutOfRange { .. }, .. })));
    assert_eq!(run([u32::MAX, 2], 3).unwrap(), 1, "u32 addition wraps");
}

#[test]
fn bad_arguments_are_errors_naming_the_kernel_and_parameter() {
    let k = copy_n().unwrap();
    let msg = |args: Args| cpu::run(&k, &mut args.clone(), [1, 1, 1]).unwrap_err().to_string();
    let base = || Args::new().buffer("x", HostBuffer::from_f32(&[0.0; 32])).buffer("y", HostBuffer::zeros(StorageType::F32, 32));
    assert_eq!(msg(base()), "kernel `copy_n`: missing scalar `n` (u32)");
    assert_eq!(msg(base().scalar("n", 1.0f32)), "kernel `copy_n`: `n` is u32 but a f32 was given");
    assert_eq!(
        msg(base().buffer("x", HostBuffer::from_u32(&[0; 32])).scalar("n", 1u32)),
        "kernel `copy_n`: buffer `x` is declared &[f32] but a u32 buffer was given"
    );
    let swap = neighbour_swap().unwrap();
    let err = cpu::run(
        &swap,
        &mut Args::new().buffer("x", HostBuffer::from_f32(&[0.0; 64])).buffer("y", HostBuffer::zeros(StorageType::F32, 64)).scalar("sync", 3u32),
        [1, 1, 1],
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("`sync` is bool"), "{err}");
}

#[kernel(workgroup = 4)]
fn runaway(out: &mut [u32]) {
    let mut i = 0u32;
    while i < 10 {
        i = i * 1;
    }
    out[0] = i;
}

#[test]
fn runaway_while_loops_hit_the_iteration_limit() {
    let mut args = Args::new().buffer("out", HostBuffer::zeros(StorageType::U32, 1));
    let err = cpu::run_with(&runaway().unwrap(), &mut args, [1, 1, 1], cpu::RunOptions { loop_limit: 1000, ..Default::default() }).unwrap_err();
    assert!(matches!(err, InterpError::Fault { fault: Fault::LoopLimit { limit: 1000 }, .. }), "{err}");
}

#[test]
fn fma_is_one_rounding_and_nothing_is_contracted() {
    #[kernel(workgroup = 1)]
    fn mul_add_forms(a: &[f32], out: &mut [f32]) {
        out[0] = fma(a[0], a[1], a[2]);
        out[1] = a[0] * a[1] + a[2];
    }
    // a·b = 1 + 2^-23 + 2^-24·… : the separate product rounds, fma does not.
    let a = 1.0 + 2f32.powi(-12);
    let args_in = [a, a, -1.0];
    let mut args = Args::new().buffer("a", HostBuffer::from_f32(&args_in)).buffer("out", HostBuffer::zeros(StorageType::F32, 2));
    cpu::run(&mul_add_forms().unwrap(), &mut args, [1, 1, 1]).unwrap();
    let out = args.get_buffer("out").unwrap().to_f32();
    assert_eq!(out[0], a.mul_add(a, -1.0));
    assert_eq!(out[1], a * a - 1.0);
    assert_ne!(out[0], out[1], "the inputs distinguish fused from unfused");
}

/// A kernel closure: inlined at each call with its own locals, so two calls with other
/// arguments (and a loop and a branch inside) give what the same Rust closure gives.
#[kernel(workgroup = 32)]
fn closure_calls(x: &[f32], y: &mut [f32], #[push] n: u32) {
    let window = |b: &[f32], start: u32, len: u32| -> f32 {
        let mut s = 0.0;
        for j in start..start + len {
            if j < n {
                s = fma(b[j], 0.5, s);
            }
        }
        s
    };
    let i = global_id().x;
    if i < n {
        let a = window(x, i, 3);
        let mut c = 1.0;
        c = window(x, i / 2, 5);
        y[i] = a - c;
    }
}

#[test]
fn kernel_closures_are_inlined_per_call() {
    let n = 50u32;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
    let window = |start: u32, len: u32| (start..start + len).filter(|&j| j < n).fold(0.0f32, |s, j| x[j as usize].mul_add(0.5, s));
    let mut args = Args::new().buffer("x", HostBuffer::from_f32(&x)).buffer("y", HostBuffer::zeros(StorageType::F32, n as usize)).scalar("n", n);
    cpu::run(&closure_calls().unwrap(), &mut args, [2, 1, 1]).unwrap();
    let y = args.get_buffer("y").unwrap().to_f32();
    for i in 0..n {
        assert_eq!(y[i as usize].to_bits(), (window(i, 3) - window(i / 2, 5)).to_bits(), "y[{i}]");
    }
}

/// Double-buffered staging with asynchronous copies: each invocation copies one 4-word
/// quad of the next tile while the tile before it is read. `mode` plants the mistakes
/// the interpreter must report: 1 reads a tile before waiting for it, 2 drops the
/// barrier after the wait, 3 copies from an index that is not a multiple of 4.
#[kernel(workgroup = 32)]
fn async_tiles(x: &[u32], y: &mut [u32], #[push] tiles: u32, #[push] mode: u32) {
    let buf = shared::<u32, 256>();
    let t = local_id().x;
    let skew = select(mode == 3, 1u32, 0u32);
    async_copy(buf, 4 * t, x, 4 * t + skew, 4);
    async_commit();
    for i in 0..tiles {
        let cur = (i % 2) * 128;
        if i + 1 < tiles {
            async_copy(buf, 128 - cur + 4 * t, x, (i + 1) * 128 + 4 * t, 4);
            async_commit();
            if mode != 1 {
                async_wait(1);
            }
        } else {
            async_wait(0);
        }
        if mode != 2 {
            barrier();
        }
        // Invocation t reads the quad invocation 31 − t copied.
        for e in 0..4u32 {
            y[i * 128 + 4 * t + e] = buf[cur + 4 * (31 - t) + e] + 1;
        }
        barrier();
    }
}

#[test]
fn async_copies_land_at_the_wait_and_misuse_is_reported() {
    let k = async_tiles().unwrap();
    let tiles = 5u32;
    let x: Vec<u32> = (0..tiles * 128).map(|i| i.wrapping_mul(2654435761)).collect();
    let run = |mode: u32| {
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_u32(&x))
            .buffer("y", HostBuffer::zeros(StorageType::U32, (tiles * 128) as usize))
            .scalar("tiles", tiles)
            .scalar("mode", mode);
        cpu::run(&k, &mut args, [1, 1, 1]).map(|_| args.get_buffer("y").unwrap().to_u32())
    };
    let y = run(0).unwrap();
    for i in 0..tiles as usize {
        for t in 0..32 {
            for e in 0..4 {
                assert_eq!(y[i * 128 + 4 * t + e], x[i * 128 + 4 * (31 - t) + e] + 1, "tile {i}, invocation {t}");
            }
        }
    }
    let err = run(1).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::AsyncPending { array, .. }, .. } if array == "buf"), "{err}");
    assert!(err.to_string().contains("async_tiles") && err.to_string().contains("in flight"), "{err}");
    let err = run(2).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::DataRace { kind: "written then read", .. }, .. }), "{err}");
    let err = run(3).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::MisalignedCopy { words: 4, dst: 0, src: 1 }, .. }), "{err}");
}

/// Aligned vector loads: invocation t loads words 4t… (or 2t… with `mode` 2) into a
/// local array and writes them out reversed. `mode` 3 plants a source index that is
/// not a multiple of 4, mode 4 one past the buffer's end.
#[kernel(workgroup = 32)]
fn word_loads(x: &[u32], y: &mut [u32], #[push] mode: u32) {
    let t = local_id().x;
    let mut w = [0u32; 6];
    if mode == 2 {
        load_words(w, 1, x, 2 * t, 2);
        y[2 * t] = w[2];
        y[2 * t + 1] = w[1];
    } else {
        let skew = select(mode == 3, 2u32, select(mode == 4, 4u32, 0u32));
        load_words(w, 2, x, 4 * t + skew, 4);
        for e in 0..4u32 {
            y[4 * t + e] = w[5 - e];
        }
    }
}

#[test]
fn word_loads_fill_local_arrays_and_misalignment_is_reported() {
    let k = word_loads().unwrap();
    let x: Vec<u32> = (0..128u32).map(|i| i.wrapping_mul(2654435761)).collect();
    let run = |mode: u32| {
        let mut args = Args::new().buffer("x", HostBuffer::from_u32(&x)).buffer("y", HostBuffer::zeros(StorageType::U32, 128)).scalar("mode", mode);
        cpu::run(&k, &mut args, [1, 1, 1]).map(|_| args.get_buffer("y").unwrap().to_u32())
    };
    let y = run(0).unwrap();
    for t in 0..32 {
        for e in 0..4 {
            assert_eq!(y[4 * t + e], x[4 * t + 3 - e], "invocation {t}, word {e}");
        }
    }
    let y = run(2).unwrap();
    for t in 0..32 {
        assert_eq!((y[2 * t], y[2 * t + 1]), (x[2 * t + 1], x[2 * t]), "invocation {t}");
    }
    let err = run(3).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::MisalignedLoad { words: 4, src: 2 }, .. }), "{err}");
    assert!(err.to_string().contains("word_loads") && err.to_string().contains("multiple of 4"), "{err}");
    let err = run(4).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::OutOfBounds { .. }, .. }), "{err}");
}

/// 128 distinct f32 values for the word-transfer kernels' `x`.
fn ramp_128() -> Vec<f32> {
    (0..128u32).map(|i| (i as f32) * 0.75 - 17.0).collect()
}

/// Runs a one-workgroup kernel of `x: &[f32], y: &mut [f32], #[push] mode: u32` on the
/// interpreter; `y` (128 values) or its fault.
fn run_x_to_y(k: &Kernel, x: &[f32], mode: u32) -> Result<Vec<f32>, InterpError> {
    let mut args = Args::new().buffer("x", HostBuffer::from_f32(x)).buffer("y", HostBuffer::zeros(StorageType::F32, 128)).scalar("mode", mode);
    cpu::run(k, &mut args, [1, 1, 1]).map(|_| args.get_buffer("y").unwrap().to_f32())
}

/// Aligned vector stores: invocation t stores a local array's words 1 … 4 (or 2 … 3
/// with `mode` 2) at 4t … (2t …) of `y`, reversed in the array first. `mode` 3 plants a
/// destination index that is not a multiple of 4, mode 4 one past the buffer's end.
#[kernel(workgroup = 32)]
fn word_stores(x: &[f32], y: &mut [f32], #[push] mode: u32) {
    let t = local_id().x;
    let mut w = [0.0; 6];
    for e in 0..4u32 {
        w[4 - e] = x[4 * t + e];
    }
    if mode == 2 {
        store_words(y, 2 * t, w, 2, 2);
    } else {
        let skew = select(mode == 3, 2u32, select(mode == 4, 4u32, 0u32));
        store_words(y, 4 * t + skew, w, 1, 4);
    }
}

#[test]
fn word_stores_write_buffers_and_misalignment_is_reported() {
    let k = word_stores().unwrap();
    let x = ramp_128();
    let run = |mode: u32| run_x_to_y(&k, &x, mode);
    let y = run(0).unwrap();
    for t in 0..32 {
        for e in 0..4 {
            assert_eq!(y[4 * t + e].to_bits(), x[4 * t + 3 - e].to_bits(), "invocation {t}, word {e}");
        }
    }
    let y = run(2).unwrap();
    for t in 0..32 {
        // w[2], w[3] are x[4t + 2], x[4t + 1].
        assert_eq!((y[2 * t].to_bits(), y[2 * t + 1].to_bits()), (x[4 * t + 2].to_bits(), x[4 * t + 1].to_bits()), "invocation {t}");
    }
    let err = run(3).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::MisalignedStore { words: 4, dst: 2 }, .. }), "{err}");
    assert!(err.to_string().contains("word_stores") && err.to_string().contains("multiple of 4"), "{err}");
    let err = run(4).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::OutOfBounds { .. }, .. }), "{err}");
}

/// Aligned vector loads from shared memory: invocation t stages words 4t … 4t + 3 of
/// `x`, then loads its neighbour's four (t + 1 mod 32) and writes them out reversed.
/// `mode` 1 leaves out the barrier (a race), 2 plants a source index that is not a
/// multiple of 4, 3 reads past the staged words (uninitialized shared memory).
#[kernel(workgroup = 32)]
fn shared_word_loads(x: &[f32], y: &mut [f32], #[push] mode: u32) {
    let s = shared::<f32, 256>();
    let t = local_id().x;
    for e in 0..4u32 {
        s[4 * t + e] = x[4 * t + e];
    }
    if mode != 1 {
        barrier();
    }
    let mut w = [0.0; 4];
    let skew = select(mode == 2, 2u32, select(mode == 3, 128u32, 0u32));
    load_words(w, 0, s, 4 * ((t + 1) % 32) + skew, 4);
    for e in 0..4u32 {
        y[4 * t + e] = w[3 - e];
    }
}

#[test]
fn shared_word_loads_fill_local_arrays_with_the_shared_memory_checks() {
    let k = shared_word_loads().unwrap();
    let x = ramp_128();
    let run = |mode: u32| run_x_to_y(&k, &x, mode);
    let y = run(0).unwrap();
    for t in 0..32 {
        let n = (t + 1) % 32;
        for e in 0..4 {
            assert_eq!(y[4 * t + e].to_bits(), x[4 * n + 3 - e].to_bits(), "invocation {t}, word {e}");
        }
    }
    let err = run(1).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::DataRace { kind: "written then read", .. }, .. }), "{err}");
    let err = run(2).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::MisalignedLoad { words: 4, src: 6 }, .. }), "{err}");
    let err = run(3).unwrap_err();
    assert!(matches!(&err, InterpError::Fault { fault: Fault::UninitializedShared { .. }, .. }), "{err}");
}
