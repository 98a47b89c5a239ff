//! The pair reduction (`workgroup_argmax`) through `argmax_rows`, on every backend
//! present, with chosen rows: ties within one invocation's columns and across
//! invocations (the smallest column wins), NaNs (never win), −∞, a row of NaNs only, and
//! rows shorter and longer than the workgroup — against a plain-Rust scan. Negative
//! control: a row whose first maximum moves gives another index.

use onekernel_runtime::{Args, HostBuffer, Launch};
use onekernel_tests::harness::{all_backends_and_msl_emu, manifest, root};

/// The first largest number of each row and its column; (−∞, n) without numbers.
fn reference(x: &[f32], n: usize) -> Vec<(f32, u32)> {
    x.chunks(n)
        .map(|row| {
            let mut best = (f32::NEG_INFINITY, n as u32);
            for (c, &v) in row.iter().enumerate() {
                if v > best.0 || (v == best.0 && (c as u32) < best.1) {
                    best = (v, c as u32);
                }
            }
            best
        })
        .collect()
}

fn rows(n: usize) -> Vec<f32> {
    let nan = f32::NAN;
    let mut x = Vec::new();
    // Ties across invocations: the max 5 at columns 700, 7 (invocation 7) and 263
    // (invocation 7 again, second pass) and 300.
    let mut r: Vec<f32> = (0..n).map(|c| (c % 5) as f32).collect();
    for c in [700, 7, 263, 300] {
        r[c % n] = 5.0;
    }
    x.extend(&r);
    // NaNs everywhere but a few numbers; the largest at 1000 and 999.
    let mut r = vec![nan; n];
    r[(1000) % n] = 3.0;
    r[999 % n] = 3.0;
    r[5] = -1.0;
    x.extend(&r);
    // Only NaNs.
    x.extend(vec![nan; n]);
    // All −∞ but one NaN at column 0.
    let mut r = vec![f32::NEG_INFINITY; n];
    r[0] = nan;
    x.extend(&r);
    // All equal: column 0.
    x.extend(vec![2.5f32; n]);
    x
}

fn run(b: &mut dyn onekernel_runtime::Backend, x: &[f32], n: usize) -> Vec<(f32, u32)> {
    let m = manifest();
    let k = m.kernel("argmax_rows").unwrap();
    let r = x.len() / n;
    let mut args = Args::new()
        .buffer("x", HostBuffer::from_f32(x))
        .buffer("value", HostBuffer::from_f32(&vec![0.0; r]))
        .buffer("index", HostBuffer::from_u32(&vec![0; r]))
        .scalar("n_cols", n as u32);
    let artifacts = root().join("generated");
    let launch = Launch { kernel: k, artifacts: &artifacts, spec: &k.variants[0].spec, groups: [r as u32, 1, 1] };
    b.launch(&launch, &mut args).unwrap_or_else(|e| panic!("{}: {e}", b.name()));
    let (v, i) = (args.get_buffer("value").unwrap().to_f32(), args.get_buffer("index").unwrap().to_u32());
    v.into_iter().zip(i).collect()
}

#[test]
fn argmax_takes_the_first_maximum_ignores_nans_and_matches_on_every_backend() {
    for n in [1024usize, 2000] {
        let x = rows(n);
        let want = reference(&x, n);
        assert_eq!(want[0].1, 7, "the reference's own tie rule");
        for mut b in all_backends_and_msl_emu() {
            let got = run(b.as_mut(), &x, n);
            for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                assert!(g.1 == w.1 && g.0.to_bits() == w.0.to_bits(), "{} n {n} row {r}: {g:?} vs {w:?}", b.name());
            }
            println!("{} n {n}: {got:?}", b.name());
        }
    }
    // Negative control: the first maximum of row 0 moved from column 7 to 3.
    let n = 1024;
    let mut x = rows(n);
    x[7] = 0.0;
    x[3] = 5.0;
    let mut cpu = onekernel_tests::harness::cpu();
    assert_eq!(run(&mut cpu, &x, n)[0].1, 3);
}
