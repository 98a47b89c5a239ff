//! `fma` over every combination of special operands — ±0, ±1, ±∞, NaN, the largest and
//! smallest normals, a subnormal, values whose product overflows — on every backend
//! present, bitwise against the interpreter (`f32::mul_add`; NaN equals NaN). Lavapipe
//! runs GLSL's exact fma emulation, whose rounding step must leave an infinite or NaN sum
//! as it is. Negative control: with that guard removed from the template, this test
//! fails on lavapipe (`fma(0, 0, −∞)` gives NaN).

use onekernel_codegen::Builder;
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::{Args, Backend, HostBuffer, Launch};
use onekernel_tests::harness::{cpu, msl_emu_or_skip, vulkan_or_skip};

mod k {
    use onekernel_macros::kernel;

    /// y = fma(a, b, c) element-wise.
    #[kernel(workgroup = 64)]
    pub fn fma3(#[len(n)] a: &[f32], #[len(n)] b: &[f32], #[len(n)] c: &[f32], #[len(n)] y: &mut [f32], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            y[i] = fma(a[i], b[i], c[i]);
        }
    }
}

#[test]
fn fma_of_special_values_matches_the_interpreter_bitwise() {
    const V: [f32; 12] = [0.0, -0.0, 1.0, -1.0, f32::INFINITY, f32::NEG_INFINITY, f32::NAN, f32::MAX, f32::MIN_POSITIVE, 1e-40, 1e20, -3.0];
    let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for &x in &V {
        for &y in &V {
            for &z in &V {
                a.push(x);
                b.push(y);
                c.push(z);
            }
        }
    }
    let n = a.len() as u32;
    let kernel = k::fma3().unwrap();
    let dir = std::env::temp_dir().join(format!("onekernel-fma-special-{}", std::process::id()));
    let g = Builder::new().kernel(kernel.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let km = &m.kernels[0];
    let run = |be: &mut dyn Backend| -> Vec<f32> {
        let mut args = Args::new()
            .buffer("a", HostBuffer::from_f32(&a))
            .buffer("b", HostBuffer::from_f32(&b))
            .buffer("c", HostBuffer::from_f32(&c))
            .buffer("y", HostBuffer::from_f32(&vec![0.0; n as usize]))
            .scalar("n", n);
        let l = Launch { kernel: km, artifacts: &dir, spec: &km.variants[0].spec, groups: [n.div_ceil(64), 1, 1] };
        be.launch(&l, &mut args).unwrap_or_else(|e| panic!("{}: {e}", be.name()));
        args.get_buffer("y").unwrap().to_f32()
    };
    let mut reference = onekernel_runtime::cpu::CpuBackend::new(vec![kernel]);
    let want = run(&mut reference);
    // The interpreter is f32::mul_add.
    for i in 0..want.len() {
        let r = a[i].mul_add(b[i], c[i]);
        assert!(r.to_bits() == want[i].to_bits() || (r.is_nan() && want[i].is_nan()), "interpreter at {i}");
    }
    let mut others: Vec<Box<dyn Backend>> = Vec::new();
    if let Some(v) = vulkan_or_skip() {
        others.push(Box::new(v));
    }
    if let Some(e) = msl_emu_or_skip() {
        others.push(Box::new(e));
    }
    let _ = cpu();
    for mut be in others {
        let got = run(be.as_mut());
        for i in 0..want.len() {
            let (w, g) = (want[i], got[i]);
            assert!(
                w.to_bits() == g.to_bits() || (w.is_nan() && g.is_nan()),
                "{}: fma({:e}, {:e}, {:e}) = {g:e}, want {w:e}",
                be.name(),
                a[i],
                b[i],
                c[i]
            );
        }
        println!("{}: {} special-value fmas bitwise equal", be.name(), want.len());
    }
    let _ = std::fs::remove_dir_all(dir);
}
