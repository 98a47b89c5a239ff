//! `load_words`, `store_words` and 16-byte asynchronous copies generated and run on
//! Vulkan (lavapipe in CI; CUDA where there is a GPU) against the interpreter, bitwise:
//! 2- and 4-word loads of u32, i32 and f32 buffers, i.e. every vector view GLSL declares
//! (`uvec4`, `ivec2`, `vec4`, `vec2`) and every C++ vector type, and 2- and 4-word stores
//! of u32, i32 and f32. Each invocation reads another invocation's words at an offset
//! into its local array, and stores from an offset into another invocation's place, so a
//! view indexed in the wrong unit or a swapped lane changes the output. The copies go
//! through L1 and past it.

use onekernel_codegen::Builder;
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::ir::Kernel;
use onekernel_dsl::manifest::Manifest;
use onekernel_macros::kernel;
use onekernel_runtime::cpu::CpuBackend;
use onekernel_runtime::validate::{validate, ValidateOptions};
use onekernel_runtime::vulkan::Vulkan;
use std::path::Path;

#[kernel(workgroup = 64)]
fn word_mix(
    #[len(num_groups().x * 256)] u: &[u32],
    #[len(num_groups().x * 128)] s: &[i32],
    #[len(num_groups().x * 384)] f: &[f32],
    #[len(num_groups().x * 64)] out: &mut [u32],
    #[len(num_groups().x * 64)] fout: &mut [f32],
    #[len(num_groups().x * 256)] uout: &mut [u32],
    #[len(num_groups().x * 128)] sout: &mut [i32],
    #[len(num_groups().x * 384)] wfout: &mut [f32],
) {
    let g = global_id().x;
    let t = local_id().x;
    let base = group_id().x * 64;
    let mirror = base + 63 - t;
    let mut wu = [0u32; 4];
    load_words(wu, 0, u, 4 * mirror, 4);
    let mut ws = [0i32; 4];
    load_words(ws, 1, s, 2 * mirror, 2);
    let mut wf = [0.0f32; 7];
    // A group's 384 floats: 64 quads, then 64 pairs read mirrored.
    load_words(wf, 1, f, 6 * base + 4 * t, 4);
    load_words(wf, 5, f, 6 * base + 256 + 2 * (63 - t), 2);
    out[g] = wu[0] ^ (wu[1] << 1) ^ (wu[2] >> 3) ^ (wu[3] * 5) ^ (ws[1] as u32) ^ ((ws[2] as u32) << 7) ^ (ws[0] as u32);
    fout[g] = wf[1] * 0.5 + wf[2] - wf[3] * wf[4] + wf[5] + wf[6] * 0.25 + wf[0];
    // The words back, each invocation's into its mirror's place (every element once).
    store_words(uout, 4 * mirror, wu, 0, 4);
    store_words(sout, 2 * mirror, ws, 1, 2);
    store_words(wfout, 6 * base + 4 * (63 - t), wf, 1, 4);
    store_words(wfout, 6 * base + 256 + 2 * t, wf, 5, 2);
}

#[test]
fn word_loads_and_stores_are_bitwise_equal_to_the_interpreter_on_vulkan_and_cuda() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let kernels = vec![word_mix().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-word-loads-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let glsl = String::from_utf8(g.files["vulkan/word_mix.comp"].clone()).unwrap();
    for view in ["uvec4 data[]; } ok_w4_u;", "ivec2 data[]; } ok_w2_s;", "vec4 data[]; } ok_w4_f;", "vec2 data[]; } ok_w2_f;"] {
        assert!(glsl.contains(view), "GLSL declares `{view}`");
    }
    let cuda_text = String::from_utf8(g.files["cuda/word_mix.cu"].clone()).unwrap();
    for store in [
        "reinterpret_cast<uint4*>(&uout[",
        "reinterpret_cast<int2*>(&sout[",
        "reinterpret_cast<float4*>(&wfout[",
        "reinterpret_cast<float2*>(&wfout[",
    ] {
        assert!(cuda_text.contains(store), "CUDA stores through `{store}`");
    }
    let groups = 3u32;
    let case = Case::new("3 groups", [groups, 1, 1])
        .buffer("u", 256 * groups as usize, Fill::Bits { and: u32::MAX, or: 0 })
        .buffer("s", 128 * groups as usize, Fill::Ints { lo: -100_000, hi: 100_000 })
        .buffer("f", 384 * groups as usize, Fill::Uniform { lo: -8.0, hi: 8.0 })
        .buffer("out", 64 * groups as usize, Fill::Zeros)
        .buffer("fout", 64 * groups as usize, Fill::Zeros)
        .buffer("uout", 256 * groups as usize, Fill::Zeros)
        .buffer("sout", 128 * groups as usize, Fill::Zeros)
        .buffer("wfout", 384 * groups as usize, Fill::Zeros);
    bitwise_on_gpus(&mut vk, kernels, &m, &dir, &case, 47);
}

/// `case` of the one kernel of `m` (generated into `dir`, which is then removed) on
/// Vulkan and, where there is one, CUDA: each result bitwise the interpreter's.
fn bitwise_on_gpus(vk: &mut Vulkan, kernels: Vec<Kernel>, m: &Manifest, dir: &Path, case: &Case, seed: u64) {
    let mut cpu = CpuBackend::new(kernels);
    let (k, v) = (&m.kernels[0], &m.kernels[0].variants[0]);
    let verdict = validate(vk, &mut cpu, k, dir, v, case, seed, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(verdict.passed, "{verdict:#?}");
    match onekernel_runtime::cuda::Cuda::new() {
        Ok(mut cuda) => {
            let verdict = validate(&mut cuda, &mut cpu, k, dir, v, case, seed, ValidateOptions::default()).unwrap_or_else(|e| panic!("{e}"));
            assert!(verdict.passed, "{verdict:#?}");
        }
        Err(e) => eprintln!("SKIPPED on CUDA: {e}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// 16-byte asynchronous copies into shared memory, through L1 (`async_copy`) and past it
/// (`async_copy_bypass_l1`), each invocation's quad read back by its mirror: the two
/// forms copy the same bits on every backend, and CUDA emits `cp.async.ca` for the first
/// and `cp.async.cg` for the second.
#[kernel(workgroup = 64)]
fn quad_copies(#[len(num_groups().x * 512)] x: &[u32], #[len(num_groups().x * 512)] y: &mut [u32]) {
    let s = shared::<u32, 512>();
    let t = local_id().x;
    let base = group_id().x * 512;
    async_copy(s, 4 * t, x, base + 4 * t, 4);
    async_copy_bypass_l1(s, 256 + 4 * t, x, base + 256 + 4 * t, 4);
    async_commit();
    async_wait(0);
    barrier();
    for i in 0..4u32 {
        y[base + 4 * t + i] = s[4 * (63 - t) + i];
        y[base + 256 + 4 * t + i] = s[256 + 4 * (63 - t) + i] ^ 0x8000_0001;
    }
}

#[test]
fn copies_past_l1_are_bitwise_equal_to_the_interpreter_on_vulkan_and_cuda() {
    let Some(mut vk) = onekernel_tests::harness::vulkan_or_skip() else { return };
    let kernels = vec![quad_copies().unwrap()];
    let dir = std::env::temp_dir().join(format!("onekernel-quad-copies-{}", std::process::id()));
    let g = Builder::new().kernels(kernels.clone()).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let cuda_text = String::from_utf8(g.files["cuda/quad_copies.cu"].clone()).unwrap();
    assert!(cuda_text.contains("ok_async_copy16(&sh_s["), "CUDA copies through L1");
    assert!(cuda_text.contains("ok_async_copy16_past_l1(&sh_s["), "CUDA copies past L1");
    assert!(cuda_text.contains("cp.async.cg.shared.global [%0], [%1], 16;"), "the helper bypasses L1");
    let groups = 2u32;
    let case = Case::new("2 groups", [groups, 1, 1]).buffer("x", 512 * groups as usize, Fill::Bits { and: u32::MAX, or: 0 }).buffer(
        "y",
        512 * groups as usize,
        Fill::Zeros,
    );
    bitwise_on_gpus(&mut vk, kernels, &m, &dir, &case, 5);
}
