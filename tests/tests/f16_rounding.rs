//! `f32_to_f16_bits(x)` and a store to an `f16` buffer round alike on every backend
//! present (the interpreter, Vulkan, CUDA, msl-emu), and both equal an oracle that
//! knows nothing of the rounding code: a binary search over the halves' widened values
//! (`f16_bits_to_f32` is exact) for the two that bracket `x`, the nearer one taken and a
//! tie going to the even one. The values: every boundary class — zeros, the smallest
//! subnormal half and the ties around it, the subnormal/normal edge, ties to even and
//! odd at 1, the largest half and the first value that rounds to infinity, infinities,
//! NaN — then every 2^20th f32 bit pattern of both signs. Negative control: an oracle
//! that flushes subnormal halves to zero (what `attn_prefill_mma` did by hand before the
//! intrinsic) disagrees with the backends.

use onekernel_codegen::Builder;
use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, Backend, HostBuffer, Launch};
use onekernel_tests::harness::{msl_emu_or_skip, vulkan_or_skip};

mod k {
    use onekernel_macros::kernel;

    /// `bits[i]` = the half nearest `x[i]` as a value; `stored[i]` = `x[i]` stored to f16.
    #[kernel(workgroup = 64)]
    pub fn round_f16(#[len(n)] x: &[f32], #[len(n)] bits: &mut [u32], #[len(n)] stored: &mut [f16], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            bits[i] = f32_to_f16_bits(x[i]);
            stored[i] = x[i];
        }
    }
}

/// The half nearest `x` by search over the halves' values, ties to the even half;
/// `flush` turns subnormal results into zeros (the negative control).
fn oracle(x: f32, flush: bool) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs() as f64;
    // The value a half stands for when rounding: infinity counts as 2^16, the next step
    // past the largest half (IEEE 754's overflow rule).
    let value = |h: u16| if h == 0x7c00 { 65536.0 } else { f16_to_f32(h) as f64 };
    let h = if a >= 65536.0 {
        0x7c00
    } else {
        // The largest half whose value is at most `a` (values rise with the bits).
        let (mut lo, mut hi) = (0u16, 0x7c00u16);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if value(mid) <= a {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        let (below, above) = (value(lo), value(lo + 1));
        if a - below < above - a || (a - below == above - a && lo % 2 == 0) {
            lo
        } else {
            lo + 1
        }
    };
    let h = if flush && h < 0x0400 { 0 } else { h };
    sign | h
}

fn inputs() -> Vec<f32> {
    let tiny = 2f32.powi(-24); // the smallest subnormal half
    let mut v = vec![
        0.0,
        -0.0,
        tiny,
        tiny * 0.5,
        tiny * 0.5000001,
        tiny * 1.5,
        tiny * 2.5,
        2f32.powi(-14),
        2f32.powi(-14) - tiny * 0.5,
        2f32.powi(-14) * 0.75,
        1.0,
        1.0 + 2f32.powi(-11),
        1.0 + 3.0 * 2f32.powi(-11),
        65504.0,
        65519.99,
        65520.0,
        1e30,
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-40,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let negated: Vec<f32> = v.iter().map(|x| -x).collect();
    v.extend(negated);
    v.extend((0..4096u32).map(|i| f32::from_bits(i << 20)));
    v
}

#[test]
fn f32_to_f16_bits_and_f16_stores_round_to_nearest_even_on_every_backend() {
    let x = inputs();
    let n = x.len() as u32;
    let want: Vec<u16> = x.iter().map(|&v| oracle(v, false)).collect();
    let flushed: Vec<u16> = x.iter().map(|&v| oracle(v, true)).collect();
    let same = |a: u16, b: u16| a == b || ((a & 0x7fff) > 0x7c00 && (b & 0x7fff) > 0x7c00);
    assert!((0..x.len()).any(|i| !same(want[i], flushed[i])), "the control must differ from the oracle somewhere");

    let kernel = k::round_f16().unwrap();
    let dir = std::env::temp_dir().join(format!("onekernel-f16-rounding-{}", std::process::id()));
    let g = Builder::new().kernel(kernel.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let km = &m.kernels[0];
    let run = |be: &mut dyn Backend| -> (Vec<u16>, Vec<u16>) {
        let mut args = Args::new()
            .buffer("x", HostBuffer::from_f32(&x))
            .buffer("bits", HostBuffer::from_u32(&vec![0xdead_beef; n as usize]))
            .buffer("stored", HostBuffer::zeros(StorageType::F16, n as usize))
            .scalar("n", n);
        let l = Launch { kernel: km, artifacts: &dir, spec: &km.variants[0].spec, groups: [n.div_ceil(64), 1, 1] };
        be.launch(&l, &mut args).unwrap_or_else(|e| panic!("{}: {e}", be.name()));
        let bits = args.get_buffer("bits").unwrap().to_u32();
        assert!(bits.iter().all(|&b| b <= 0xffff), "{}: the high 16 bits are zero", be.name());
        let stored = args.get_buffer("stored").unwrap().as_bytes().chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
        (bits.into_iter().map(|b| b as u16).collect(), stored)
    };
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(onekernel_runtime::cpu::CpuBackend::new(vec![kernel]))];
    if let Some(v) = vulkan_or_skip() {
        backends.push(Box::new(v));
    }
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(c) => backends.push(Box::new(c)),
        Err(e) => println!("SKIPPED on CUDA (no NVIDIA GPU here): {e}"),
    }
    if let Some(e) = msl_emu_or_skip() {
        backends.push(Box::new(e));
    }
    for mut be in backends {
        let (bits, stored) = run(be.as_mut());
        for i in 0..x.len() {
            assert!(same(bits[i], want[i]), "{}: f32_to_f16_bits({:e}) = {:#06x}, want {:#06x}", be.name(), x[i], bits[i], want[i]);
            assert!(same(stored[i], want[i]), "{}: f16 store of {:e} = {:#06x}, want {:#06x}", be.name(), x[i], stored[i], want[i]);
        }
        let disagree = (0..x.len()).filter(|&i| !same(bits[i], flushed[i])).count();
        assert!(disagree > 0, "{}: the flushing control agrees everywhere", be.name());
        println!("{}: {} values rounded as the oracle (the flushing control differs at {disagree})", be.name(), x.len());
    }
    let _ = std::fs::remove_dir_all(dir);
}
