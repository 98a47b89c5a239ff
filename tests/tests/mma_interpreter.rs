//! The reference meaning of `mma_f16` in the interpreter: each group of 32 invocations
//! adds its 16 × k by k × 8 product to 16 × `cols` accumulators, one `fma` per product
//! in inner-index order from the old value (checked against plain Rust over the same
//! f16 values, A stored by rows and by columns, 0…8 columns), and the faults it reports
//! instead of undefined behaviour: a group that is not whole, operands that differ
//! within a group, misaligned f16 indices, more than eight columns, and another group
//! reading the accumulators without a barrier (the group's own invocations may).

use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::types::StorageType;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::{self, Fault, InterpError};
use onekernel_runtime::{Args, HostBuffer};
use onekernel_tests::Rng;

/// f16 values of A per group (32 × 40: room for 16 × 32 by rows or by columns).
const A_HALVES: usize = 1280;
/// f16 values of B per group (8 columns of 40).
const B_HALVES: usize = 320;

/// Two groups, each one tile with k = 32; `mode` 0 computes, 1–5 make one fault each.
#[kernel(workgroup = 64, fast)]
fn mma_tile(a: &[u32], b: &[u32], c: &[f32], out: &mut [f32], #[push] cols: u32, #[push] col_major: u32, #[push] mode: u32) {
    let sa = shared::<u32, 1280>();
    let sb = shared::<u32, 320>();
    let sc = shared::<f32, 256>();
    let t = local_id().x;
    let g = t / 32;
    for i in (t..1280u32).step_by(64) {
        sa[i] = a[i];
    }
    for i in (t..320u32).step_by(64) {
        sb[i] = b[i];
    }
    for i in (t..256u32).step_by(64) {
        sc[i] = c[i];
    }
    barrier();
    // Indices of A and B count f16 values: group g's A starts at g · 1280, its B at
    // g · 320. Mode 1: one invocation passes another column count; 3: nine columns; 2: an A
    // index that is not a multiple of 8.
    let n = select(mode == 1 && t % 32 == 5, cols - 1, select(mode == 3, 9u32, cols));
    let ai = select(mode == 2, g * 1280 + 4, g * 1280);
    if mode == 4 {
        // Only part of group 1 reaches the statement.
        if t < 40 {
            mma_f16(sc, g * 128, 8, 1, n, sa, ai, 40, false, sb, g * 320, 40, 32);
        }
    } else if col_major != 0 {
        mma_f16(sc, g * 128, 8, 1, n, sa, ai, 40, true, sb, g * 320, 40, 32);
    } else {
        mma_f16(sc, g * 128, 8, 1, n, sa, ai, 40, false, sb, g * 320, 40, 32);
    }
    // The group's own accumulators need no barrier; mode 5 reads the other group's.
    let own = g * 128 + (t % 32) * 4;
    let read = select(mode == 5, (own + 128) % 256, own);
    for e in 0..4u32 {
        out[g * 128 + (t % 32) * 4 + e] = sc[read + e];
    }
}

struct Inputs {
    a: Vec<u16>,
    b: Vec<u16>,
    c: Vec<f32>,
}

fn inputs(seed: u64) -> Inputs {
    let mut r = Rng::new(seed);
    // Normal f16 values in ±[1/8, 2): exact products, sums that round.
    let half = |r: &mut Rng| (r.next_u32() as u16 & 0x8fff) | 0x3000;
    let a = (0..2 * A_HALVES).map(|_| half(&mut r)).collect();
    let b = (0..2 * B_HALVES).map(|_| half(&mut r)).collect();
    let c = r.f32_vec(256, -4.0, 4.0);
    Inputs { a, b, c }
}

fn words(h: &[u16]) -> Vec<u32> {
    h.chunks(2).map(|p| p[0] as u32 | (p[1] as u32) << 16).collect()
}

fn args(x: &Inputs, cols: u32, col_major: bool, mode: u32) -> Args {
    Args::new()
        .buffer("a", HostBuffer::from_u32(&words(&x.a)))
        .buffer("b", HostBuffer::from_u32(&words(&x.b)))
        .buffer("c", HostBuffer::from_f32(&x.c))
        .buffer("out", HostBuffer::zeros(StorageType::F32, 256))
        .scalar("cols", cols)
        .scalar("col_major", col_major as u32)
        .scalar("mode", mode)
}

/// Plain Rust: `acc[i][j]` of group g after the tile, f32 `mul_add` in k order.
fn expected(x: &Inputs, cols: usize, col_major: bool) -> Vec<f32> {
    let mut out = x.c.clone();
    for g in 0..2 {
        for i in 0..16 {
            for j in 0..cols {
                let mut s = x.c[g * 128 + i * 8 + j];
                for kk in 0..32 {
                    let ah = if col_major { kk * 40 + i } else { i * 40 + kk };
                    let av = f16_to_f32(x.a[g * A_HALVES + ah]);
                    let bv = f16_to_f32(x.b[g * B_HALVES + j * 40 + kk]);
                    s = av.mul_add(bv, s);
                }
                out[g * 128 + i * 8 + j] = s;
            }
        }
    }
    out
}

#[test]
fn a_tile_is_one_fma_per_product_in_inner_order_by_rows_and_by_columns() {
    let k = mma_tile().unwrap();
    for (seed, cols) in [(1u64, 8u32), (2, 4), (3, 1), (4, 0)] {
        let x = inputs(seed);
        for col_major in [false, true] {
            let mut a = args(&x, cols, col_major, 0);
            cpu::run(&k, &mut a, [1, 1, 1]).unwrap_or_else(|e| panic!("cols {cols}: {e}"));
            let got = a.get_buffer("out").unwrap().to_f32();
            let want = expected(&x, cols as usize, col_major);
            assert_eq!(
                got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "cols {cols}, col_major {col_major}"
            );
            // Negative control: the other layout gives other sums.
            if cols > 0 {
                assert_ne!(want, expected(&x, cols as usize, !col_major));
            }
        }
    }
}

#[test]
fn misuse_is_a_fault_not_undefined_behaviour() {
    let k = mma_tile().unwrap();
    let x = inputs(9);
    let fault = |mode: u32| match cpu::run(&k, &mut args(&x, 8, false, mode), [1, 1, 1]) {
        Err(InterpError::Fault { fault, .. }) => fault,
        other => panic!("mode {mode}: expected a fault, got {other:?}"),
    };
    assert!(matches!(fault(1), Fault::MmaOperandsDiffer { group: 0, operand: "column count", first: 8, other: 7 }), "{:?}", fault(1));
    assert!(matches!(fault(2), Fault::MmaOperand { operand: "A index", value: 4, .. }), "{:?}", fault(2));
    assert!(matches!(fault(3), Fault::MmaOperand { operand: "column count", value: 9, .. }), "{:?}", fault(3));
    assert!(matches!(fault(4), Fault::MmaPartialGroup { group: 1, active: 8 }), "{:?}", fault(4));
    match fault(5) {
        Fault::DataRace { array, kind, first, .. } => {
            assert_eq!(array, "sc");
            assert_eq!(kind, "written then read");
            assert!(first.contains("mma_f16") && first.contains("group"), "{first}");
        }
        other => panic!("mode 5: expected a data race, got {other:?}"),
    }
    let msg = InterpError::Fault {
        site: Box::new(cpu::Site { kernel: "mma_tile".into(), location: String::new(), function: None, group: [0; 3], invocation: 0 }),
        fault: fault(4),
    }
    .to_string();
    assert!(msg.contains("mma_f16") && msg.contains("8 of the 32"), "{msg}");
}
