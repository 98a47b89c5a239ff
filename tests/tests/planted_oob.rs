//! A planted out-of-bounds write on CUDA, for the sanitizer script's negative control
//! (`scripts/gpu-evidence.sh sanitize`): it runs only with ONEKERNEL_PLANTED_OOB=1 and
//! a CUDA device, under compute-sanitizer, which must report it. The kernel writes one
//! element past the buffer its launch declares; the runtime's length check cannot see
//! it (the index is computed, the declared length is right), nor does anything else run
//! it.

use onekernel_codegen::Builder;
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::{Args, Backend, HostBuffer, Launch};

mod k {
    use onekernel_macros::kernel;

    /// y[i + 1] = 1 for i < n: the last invocation writes y[n], past the buffer.
    #[kernel(workgroup = 64)]
    pub fn planted_oob(#[len(n)] y: &mut [f32], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            y[i + 1] = 1.0;
        }
    }
}

#[test]
fn planted_out_of_bounds_write_runs_only_when_asked() {
    if std::env::var("ONEKERNEL_PLANTED_OOB").as_deref() != Ok("1") {
        println!("SKIPPED: set ONEKERNEL_PLANTED_OOB=1 (the sanitizer script does)");
        return;
    }
    let kernel = k::planted_oob().unwrap();
    let dir = std::env::temp_dir().join(format!("onekernel-planted-oob-{}", std::process::id()));
    let g = Builder::new().kernel(kernel).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let km = &m.kernels[0];
    let mut cuda = onekernel_runtime::cuda::Cuda::new().expect("a CUDA device");
    let n = 4096u32;
    let mut args = Args::new().buffer("y", HostBuffer::from_f32(&vec![0.0; n as usize])).scalar("n", n);
    let l = Launch { kernel: km, artifacts: &dir, spec: &km.variants[0].spec, groups: [n.div_ceil(64), 1, 1] };
    // Without a sanitizer the stray write may land in padding unnoticed.
    let _ = cuda.launch(&l, &mut args);
    let _ = std::fs::remove_dir_all(dir);
}
