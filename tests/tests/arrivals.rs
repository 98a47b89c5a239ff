//! Arrivals: `last_arrival(counters, index, count)` (docs/DSL.md, "Arrivals"), a split
//! reduction finished in one launch by the last of its workgroups.
//!
//! `split_sum` sums rows of 64 · `parts` values: workgroup (p, r) sums its 64 with
//! `workgroup_sum`, writes the part, and arrives at counter r; the last of the row's
//! workgroups adds the parts in order. The sums are exact f32 operations in a defined
//! order, so every backend — the interpreter in both workgroup orders, lavapipe or
//! NVIDIA's Vulkan, CUDA, msl-emu — must give the bits plain Rust gives for that order,
//! launch after launch on the same counters (which each launch leaves at zero). On the
//! GPUs 4096 workgroups run concurrently, so a merge that read parts before they were
//! visible would give other bits. Negative controls: a last workgroup that writes its own
//! index gives results that depend on the order, which the reversed interpreter shows;
//! counts one too high and one too low, and counters not at zero, are faults.

use onekernel_dsl::types::StorageType;
use onekernel_runtime::cpu::{self, Fault, InterpError, RunOptions};
use onekernel_runtime::{Args, Backend, HostBuffer, Launch};
use onekernel_tests::harness::{gpu_backends, msl_emu_or_skip};
use onekernel_tests::tiles::Generated;
use onekernel_tests::{bits, uniform};

mod k {
    use onekernel_macros::kernel;

    /// Row r of `out` = the sum of `x[r · parts · 64 …][.. parts · 64]`: workgroup (p, r)
    /// sums its 64 values and the last of the row's `parts` to arrive adds the parts in
    /// order. `mode` plants a mistake: 1 the last writes its own part index (an
    /// order-dependent result), 2 arrives with a count one too high, 3 one too low.
    #[kernel(workgroup = 64)]
    pub fn split_sum(
        #[len(num_groups().x * num_groups().y * 64)] x: &[f32],
        #[len(num_groups().x * num_groups().y)] parts: &mut [f32],
        #[len(num_groups().y)] counters: &mut [u32],
        #[len(num_groups().y)] out: &mut [f32],
        #[push] mode: u32,
    ) {
        let p = group_id().x;
        let r = group_id().y;
        let n = num_groups().x;
        let t = local_id().x;
        let s = workgroup_sum(x[(r * n + p) * 64 + t]);
        if t == 0 {
            parts[r * n + p] = s;
        }
        let count = select(mode == 2, n + 1, select(mode == 3, n - 1, n));
        let last = last_arrival(counters, r, count);
        if last && t == 0 {
            let mut total = 0.0;
            for q in 0..n {
                total += parts[r * n + q];
            }
            out[r] = select(mode == 1, p as f32, total);
        }
    }
}

/// What `split_sum` computes, in its order: the stride-halving tree per part, then the
/// parts added one after another from 0.
fn expected(x: &[f32], rows: usize, parts: usize) -> Vec<f32> {
    (0..rows)
        .map(|r| {
            let mut total = 0.0f32;
            for p in 0..parts {
                let mut v: Vec<f32> = x[(r * parts + p) * 64..][..64].to_vec();
                let mut s = 32;
                while s > 0 {
                    for i in 0..s {
                        v[i] += v[i + s];
                    }
                    s /= 2;
                }
                total += v[0];
            }
            total
        })
        .collect()
}

fn args(x: &[f32], rows: usize, parts: usize, counters: HostBuffer, mode: u32) -> Args {
    Args::new()
        .buffer("x", HostBuffer::from_f32(x))
        .buffer("parts", HostBuffer::zeros(StorageType::F32, rows * parts))
        .buffer("counters", counters)
        .buffer("out", HostBuffer::zeros(StorageType::F32, rows))
        .scalar("mode", mode)
}

fn inputs(rows: usize, parts: usize, seed: u64) -> Vec<f32> {
    uniform(seed, rows * parts * 64, -1.0, 1.0)
}

#[test]
fn the_last_arrival_merges_every_part_on_every_backend_and_leaves_the_counters_at_zero() {
    let built = Generated::new(vec![k::split_sum().unwrap()], "arrivals");
    let km = built.manifest.kernel("split_sum").unwrap();
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(cpu::CpuBackend::new(built.kernels.clone()))];
    backends.extend(gpu_backends());
    if let Some(e) = msl_emu_or_skip() {
        backends.push(Box::new(e));
    }
    for (rows, parts) in [(3usize, 1usize), (5, 7), (64, 64)] {
        let x = inputs(rows, parts, 40 + parts as u64);
        let want = bits(&expected(&x, rows, parts));
        for be in backends.iter_mut() {
            let name = be.name();
            let mut a = args(&x, rows, parts, HostBuffer::zeros(StorageType::U32, rows), 0);
            // Three launches on the same counters: each must find them at zero.
            for launch in 0..3 {
                let l = Launch { kernel: km, artifacts: &built.dir, spec: &km.variants[0].spec, groups: [parts as u32, rows as u32, 1] };
                be.launch(&l, &mut a).unwrap_or_else(|e| panic!("{name}, {rows} x {parts}, launch {launch}: {e}"));
                assert_eq!(bits(&a.get_buffer("out").unwrap().to_f32()), want, "{name}, {rows} x {parts}, launch {launch}");
                assert!(a.get_buffer("counters").unwrap().to_u32().iter().all(|&c| c == 0), "{name}: counters left counting");
            }
            println!("{name} ({}): {rows} rows of {parts} parts, three launches: the plain-Rust bits", be.info().driver);
        }
    }
}

#[test]
fn workgroup_order_does_not_change_a_merge_in_order_and_does_change_one_that_is_not() {
    let k = k::split_sum().unwrap();
    let (rows, parts) = (4usize, 9usize);
    let x = inputs(rows, parts, 3);
    let run = |mode: u32, reversed: bool| {
        let mut a = args(&x, rows, parts, HostBuffer::zeros(StorageType::U32, rows), mode);
        cpu::run_with(&k, &mut a, [parts as u32, rows as u32, 1], RunOptions { reversed, ..Default::default() }).unwrap();
        bits(&a.get_buffer("out").unwrap().to_f32())
    };
    assert_eq!(run(0, false), run(0, true));
    assert_eq!(run(0, true), bits(&expected(&x, rows, parts)));
    // Negative control: the last workgroup's own index is the last part in linear
    // order and the first in reversed order.
    assert_eq!(run(1, false), bits(&vec![(parts - 1) as f32; rows]));
    assert_eq!(run(1, true), bits(&vec![0.0; rows]));
}

#[test]
fn broken_arrival_protocols_are_faults() {
    let k = k::split_sum().unwrap();
    let (rows, parts) = (2usize, 5usize);
    let x = inputs(rows, parts, 5);
    let fault = |mode: u32, counters: HostBuffer| {
        let mut a = args(&x, rows, parts, counters, mode);
        match cpu::run(&k, &mut a, [parts as u32, rows as u32, 1]) {
            Err(InterpError::Fault { fault, site }) => (fault, site.to_string()),
            other => panic!("mode {mode}: expected a fault, got {other:?}"),
        }
    };
    let zeros = || HostBuffer::zeros(StorageType::U32, rows);
    let (f, site) = fault(2, zeros());
    assert!(matches!(&f, Fault::ArrivalIncomplete { counters, index: 0, arrived: 5, count: 6 } if counters == "counters"), "{f:?}");
    assert!(site.contains("split_sum"), "{site}");
    let (f, _) = fault(3, zeros());
    assert!(matches!(&f, Fault::ArrivalOverflow { index: 0, count: 4, .. }), "{f:?}");
    let (f, _) = fault(0, HostBuffer::from_u32(&[0, 3]));
    assert!(matches!(&f, Fault::ArrivalCounterNotZero { index: 1, value: 3, .. }), "{f:?}");
    assert!(f.to_string().contains("zero the buffer once"), "{f}");
}

/// `onekernel validate` runs the reference of a kernel with arrivals in both workgroup
/// orders: a kernel whose result depends on which workgroup arrives last fails its case
/// with that reason (the merge in order passes the same case).
#[test]
fn validation_fails_a_kernel_whose_result_depends_on_the_last_arrival() {
    use onekernel_dsl::cases::{Case, Fill};
    use onekernel_dsl::types::Literal;
    use onekernel_runtime::validate::{validate, ValidateOptions};
    let built = Generated::new(vec![k::split_sum().unwrap()], "arrivals-validate");
    let km = built.manifest.kernel("split_sum").unwrap();
    assert!(km.arrivals, "the manifest records the kernel's arrivals");
    let case = |mode: u32| {
        Case::new(format!("mode {mode}"), [6, 3, 1])
            .buffer("x", 6 * 3 * 64, Fill::Uniform { lo: -1.0, hi: 1.0 })
            .buffer("parts", 18, Fill::Zeros)
            .buffer("counters", 3, Fill::Zeros)
            .buffer("out", 3, Fill::Zeros)
            .scalar("mode", Literal::U32(mode))
    };
    let mut device = cpu::CpuBackend::new(built.kernels.clone());
    let mut reference = cpu::CpuBackend::new(built.kernels.clone());
    let verdict = |mode: u32, device: &mut cpu::CpuBackend, reference: &mut cpu::CpuBackend| {
        validate(device, reference, km, &built.dir, &km.variants[0], &case(mode), 7, ValidateOptions::default()).unwrap()
    };
    let good = verdict(0, &mut device, &mut reference);
    assert!(good.passed && good.reference_fault.is_none(), "{good:?}");
    let bad = verdict(1, &mut device, &mut reference);
    assert!(!bad.passed, "{bad:?}");
    let why = bad.reference_fault.unwrap_or_default();
    assert!(why.contains("order the workgroups run in") && why.contains("out[0]"), "{why}");
    println!("in order: passed; last arrival's own index: {why}");
}
