//! A kernel that uses every DSL construct, generated for every backend: its SPIR-V
//! passes spirv-val and the interface cross-check, and its CUDA and MSL pass the clang
//! parse checks. The catalogue's kernels alone do not reach every template path.

use onekernel_codegen::generate::generate_kernel;
use onekernel_macros::kernel;

/// Everything at once.
#[kernel(workgroup = (8, 4), variants(flag = [false, true], mode = [1, 2, 4], T = [f32, bf16, f16]))]
pub fn everything(
    #[len(select(flag, n, n + 1) * mode)] x: &[T],
    bytes: &[u8],
    signed: &[i8],
    halves: &mut [u16],
    out_t: &mut [T],
    y: &mut [f32],
    counts: &mut [i32],
    ws: &[i32],
    #[push] n: u32,
    #[push] bias: f32,
    #[push] input: i32,
    #[spec(default = 3)] k: i32,
    #[spec(default = 0.5)] sample: f32,
) {
    let s = shared::<f32, 32>();
    let cw = shared::<i32, 256>();
    let sized = shared::<f32, { select(flag, 64u32, 32u32) * mode }>();
    let t = local_id().x + local_id().y * WORKGROUP_X;
    let g = global_id().x;
    async_copy(cw, 2 * t, counts, 2 * t, 2);
    async_commit();
    async_copy(cw, 64 + t, counts, t, 1);
    async_copy(cw, 128 + 4 * t, counts, 4 * t, 4);
    async_commit();
    async_wait(1);
    async_wait(0);
    let mut wq = [0i32; 6];
    load_words(wq, 0, ws, 4 * t, 4);
    load_words(wq, 4, ws, 2 * t, 2);
    let mut table = [0.5, 1.5, -2.0, 4.0];
    let mut acc = [0.0f32; 2];
    let mut sum = 0.0;
    for i in (t..n).step_by(32) {
        if i % 2 == 0 {
            continue;
        }
        sum += x[i] * table[i % 4] + (bytes[i] as f32) - (signed[i] as f32);
        if sum > 1000.0 {
            break;
        }
    }
    for j in (-4..k).step_by(3) {
        sum += (j * input) as f32;
    }
    table[1] = sum;
    acc[0] = fma(sum, 2.0, bias).max(-1.0).min(1.0);
    acc[1] = select(flag, exp(acc[0]), sqrt(abs(acc[0])) / 3.0 + sample);
    let mut j = k;
    while j > 0 {
        j -= 1;
    }
    let bits = acc[1].to_bits() ^ 0x8000_0000;
    let back = f32::from_bits(bits >> 1 << 1);
    sized[t] = back;
    s[t] = sized[t] + (mode as f32) + table[1] * 0.0 + (cw[2 * t] + cw[64 + t] + cw[128 + 4 * t] + wq[1] + wq[5]) as f32;
    barrier();
    let total = workgroup_sum(s[t]);
    let top = workgroup_max(s[31 - t]);
    let low = workgroup_min(j * 2 - input);
    let many = workgroup_sum(count_ones(bits));
    if g < n && t == 0 {
        y[group_id().x] = total
            + top
            + f16_bits_to_f32(count_ones(bits) & 0xffff)
            + bf16_bits_to_f32(many)
            + bf16_bits_to_f32(funnel_shr(many, bits, 16))
            + tanh(bias).clamp(-0.5, 0.5);
        counts[group_id().x] = low + -(i32::MIN + 1) % 7 - (k << 2) + (-8 >> 1);
        halves[g] = many & 0xffff;
        store_words(y, 2 * g + 2, acc, 0, 2);
        store_words(counts, 4 * g + 4, wq, 0, 4);
        out_t[g] = sigmoid(gelu_tanh(gelu_erf(erf(softplus(log(log2(exp2(log1p(rsqrt(recip(bias + 2.0)))))))))));
        return;
    }
    {
        let inner = -(j as f32) + f32::EPSILON;
        if inner < 0.0 && !flag || num_groups().x == 0 {
            y[0] = inner;
        }
    }
}

#[test]
fn every_construct_generates_validates_and_parses_on_every_backend() {
    let kernels = everything().unwrap();
    assert_eq!(kernels.len(), 3);
    let have_clang = onekernel_tests::clang::available("the parse checks of the coverage kernel");
    let dir = std::env::temp_dir().join(format!("onekernel-coverage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for k in &kernels {
        let out = generate_kernel(k).unwrap_or_else(|e| panic!("{e}"));
        let m = &out.manifest;
        assert_eq!(m.variants.len(), 6, "flag × mode");
        assert!(m.variants.iter().any(|v| v.cuda_entry == format!("{}__flag_true__mode_4", k.name)));
        let bytes = |entry: &str| m.variants.iter().find(|v| v.cuda_entry == format!("{}{entry}", k.name)).unwrap().shared_bytes;
        assert_eq!(bytes("__flag_true__mode_4") - bytes("__flag_false__mode_1"), 4 * (256 - 32), "`sized` is 64·4 vs 32·1 floats");
        assert_eq!(bytes("__flag_true__mode_4"), m.shared_bytes, "the largest variant is the kernel's");
        let (fma, f16) = (onekernel_codegen::analysis::FMA_SPEC_ID, onekernel_codegen::analysis::F16_SPEC_ID);
        assert_eq!(m.vulkan.reflection.spec_ids, vec![0, 1, 2, 3, fma, f16], "kernel specs plus the fma and f16 switches");
        assert_eq!(m.vulkan.fma_spec_id, Some(fma));
        assert_eq!(m.vulkan.f16_spec_id, Some(f16));
        assert_eq!(m.vulkan.reflection.push_size, 12);
        assert!(m.buffers.iter().any(|b| b.name == "signed"), "the manifest uses DSL names");
        assert!(m.push_constants.iter().any(|p| p.name == "input"));
        let cuda = String::from_utf8(out.files.iter().find(|(p, _)| p.ends_with(".cu")).unwrap().1.clone()).unwrap();
        assert!(cuda.contains("signed_") && cuda.contains("pc.input_"), "generated code escapes reserved names");
        assert!(
            cuda.contains("reinterpret_cast<const int4*>(&ws[") && cuda.contains("reinterpret_cast<const int2*>(&ws["),
            "load_words is one vector load"
        );
        assert!(
            cuda.contains("reinterpret_cast<float2*>(&y[") && cuda.contains("reinterpret_cast<int4*>(&counts["),
            "store_words is one vector store"
        );
        let glsl = String::from_utf8(out.files.iter().find(|(p, _)| p.ends_with(".comp")).unwrap().1.clone()).unwrap();
        assert!(glsl.contains("ivec4 data[]; } ok_w4_ws;") && glsl.contains("ivec2 data[]; } ok_w2_ws;"), "GLSL views of `ws`");
        assert!(
            glsl.contains("readonly buffer ok_buf_ws {") && glsl.contains("readonly restrict buffer ok_buf_bytes {"),
            "only aliased buffers lose `restrict`"
        );
        assert_eq!(m.vulkan.reflection.bindings.len(), m.buffers.len(), "a binding with views is one binding");
        if !have_clang {
            continue;
        }
        for (path, bytes) in &out.files {
            let file = dir.join(path.replace('/', "_"));
            std::fs::write(&file, bytes).unwrap();
            let checked = if path.ends_with(".metal") {
                onekernel_tests::clang::check_metal(&file)
            } else if path.ends_with(".cu") {
                onekernel_tests::clang::check_cuda(&file, "sm_70")
            } else {
                continue;
            };
            checked.unwrap_or_else(|e| panic!("{path}:\n{e}"));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
