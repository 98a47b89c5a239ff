//! Kernels past CUDA's 48 KiB of static shared memory: the generated CUDA keeps the
//! largest arrays in one dynamic region and exports each entry's size for the launch
//! (`<entry>__dyn_shared`); kernels within the limit keep static arrays only. The GPU
//! machine runs such a kernel (`attn_decode_chunk`'s staged variants, 52 KiB).

use onekernel_codegen::generate::generate_kernel;
use onekernel_codegen::KernelInfo;
use onekernel_macros::kernel;

/// 49 KiB when `big` (a 48 KiB array and a 1 KiB one), 1.25 KiB otherwise.
#[kernel(workgroup = 64, variants(big = [false, true]))]
pub fn wide(y: &mut [f32]) {
    let a = shared::<f32, { select(big, 12288u32, 64u32) }>();
    let b = shared::<f32, 256>();
    let t = local_id().x;
    a[t] = 1.0;
    b[t] = 2.0;
    barrier();
    y[t] = a[t] + b[t];
}

/// 48 KiB exactly: CUDA's static limit.
#[kernel(workgroup = 64)]
pub fn at_limit(y: &mut [f32]) {
    let a = shared::<f32, 12032>();
    let b = shared::<f32, 256>();
    let t = local_id().x;
    a[t] = 1.0;
    b[t] = 2.0;
    barrier();
    y[t] = a[t] + b[t];
}

fn cuda_of(out: &onekernel_codegen::generate::KernelOutput) -> String {
    String::from_utf8(out.files.iter().find(|(p, _)| p.ends_with(".cu")).unwrap().1.clone()).unwrap()
}

#[test]
fn arrays_past_the_static_limit_move_to_dynamic_shared_memory_largest_first() {
    let k = wide().unwrap();
    assert_eq!(KernelInfo::of(&k).cuda_dynamic_shared, vec![0], "the 48 KiB array goes; the 1 KiB one fits beside nothing else");
    let out = generate_kernel(&k).unwrap();
    assert!(out.manifest.cuda.dynamic_shared);
    assert_eq!(out.manifest.shared_bytes, 4 * (12288 + 256));
    let cuda = cuda_of(&out);
    assert!(cuda.contains("extern __shared__ __align__(16) unsigned char ok_dyn_shared[];"), "{cuda}");
    assert!(cuda.contains("float* const sh_a = reinterpret_cast<float*>(ok_dyn_shared + (0u));"), "{cuda}");
    assert!(cuda.contains("__shared__ __align__(16) float sh_b[256];"), "the small array stays static");
    assert!(cuda.contains("constexpr unsigned int wide_dyn_shared() { return 0u + (((big ? 12288u : 64u) + 3u) / 4u) * 16u; }"), "{cuda}");
    assert!(cuda.contains("extern \"C\" __device__ unsigned int ENTRY##__dyn_shared = wide_dyn_shared<__VA_ARGS__>();"), "{cuda}");
    // Other backends declare their arrays as before.
    let glsl = String::from_utf8(out.files.iter().find(|(p, _)| p.ends_with(".comp")).unwrap().1.clone()).unwrap();
    assert!(!glsl.contains("ok_dyn_shared"));
}

#[test]
fn kernels_within_the_static_limit_keep_static_arrays() {
    let k = at_limit().unwrap();
    assert!(KernelInfo::of(&k).cuda_dynamic_shared.is_empty());
    let out = generate_kernel(&k).unwrap();
    assert!(!out.manifest.cuda.dynamic_shared);
    let cuda = cuda_of(&out);
    assert!(!cuda.contains("ok_dyn_shared") && !cuda.contains("__dyn_shared"), "{cuda}");
    assert!(cuda.contains("__shared__ __align__(16) float sh_a[12032];"));
}

#[test]
fn dynamic_shared_cuda_parses_with_a_runtime_instance() {
    if !onekernel_tests::clang::available("the parse check") {
        return;
    }
    let mut cuda = cuda_of(&generate_kernel(&wide().unwrap()).unwrap());
    // As the runtime appends an instance for spec values outside the variants.
    cuda.push_str("\nOK_INSTANCE(wide__rt_true, true)\n");
    let file = std::env::temp_dir().join(format!("onekernel-dyn-shared-{}.cu", std::process::id()));
    std::fs::write(&file, cuda).unwrap();
    let checked = onekernel_tests::clang::check_cuda(&file, "sm_70");
    let _ = std::fs::remove_file(&file);
    checked.unwrap_or_else(|e| panic!("{e}"));
}
