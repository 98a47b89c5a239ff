//! GLSL 450 for Vulkan, compiled to SPIR-V by shaderc.

use super::Dialect;
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::types::{Scalar, StorageType};

/// The GLSL dialect.
pub struct Glsl;

impl Dialect for Glsl {
    fn name(&self) -> &'static str {
        "glsl"
    }

    fn template(&self) -> &'static str {
        "glsl/kernel.comp.tera"
    }

    fn backend(&self) -> &'static str {
        "vulkan"
    }

    fn scalar(&self, s: Scalar) -> &'static str {
        match s {
            Scalar::F32 => "float",
            Scalar::I32 => "int",
            Scalar::U32 => "uint",
            Scalar::Bool => "bool",
        }
    }

    fn float_suffix(&self) -> &'static str {
        ""
    }

    fn builtin(&self, b: Builtin, axis: u8) -> String {
        let c = ["x", "y", "z"][axis as usize];
        let v = match b {
            Builtin::LocalId => "gl_LocalInvocationID",
            Builtin::GroupId => "gl_WorkGroupID",
            Builtin::GlobalId => "gl_GlobalInvocationID",
            Builtin::NumGroups => "gl_NumWorkGroups",
            Builtin::WorkgroupSize => "gl_WorkGroupSize",
        };
        format!("{v}.{c}")
    }

    fn local_linear_id(&self) -> &'static str {
        "gl_LocalInvocationIndex"
    }

    fn push_ref(&self, p: &Param) -> String {
        format!("pc.{}", p.name)
    }

    fn spec_ref(&self, p: &Param) -> String {
        p.name.clone()
    }

    fn storage_type(&self, t: StorageType) -> &'static str {
        match t {
            StorageType::F32 => "float",
            StorageType::I32 => "int",
            StorageType::U32 => "uint",
            StorageType::F16 | StorageType::Bf16 | StorageType::U16 => "uint16_t",
            StorageType::U8 => "uint8_t",
            StorageType::I8 => "int8_t",
        }
    }

    fn buffer_element(&self, name: &str, index: &str) -> String {
        format!("{name}.data[{index}]")
    }

    fn bitcast(&self, from: Scalar, to: Scalar, e: &str) -> String {
        match (from, to) {
            (Scalar::F32, Scalar::U32) => format!("floatBitsToUint({e})"),
            (Scalar::F32, Scalar::I32) => format!("floatBitsToInt({e})"),
            (Scalar::U32, Scalar::F32) => format!("uintBitsToFloat({e})"),
            (Scalar::I32, Scalar::F32) => format!("intBitsToFloat({e})"),
            (a, b) if a == b => e.to_string(),
            (_, to) => format!("{}({e})", self.scalar(to)),
        }
    }

    fn wrapping_i32(&self, op: &str, a: &str, b: Option<&str>) -> String {
        match b {
            Some(b) => format!("({a} {op} {b})"),
            None => format!("({op}{a})"),
        }
    }

    fn unroll_hint(&self) -> Option<&'static str> {
        Some("[[unroll]]")
    }

    fn spec_logic_as_select(&self) -> bool {
        true
    }

    fn word_vector(&self, elem: Scalar, words: u32) -> String {
        let prefix = match elem {
            Scalar::F32 => "",
            Scalar::I32 => "i",
            _ => "u",
        };
        format!("{prefix}vec{words}")
    }

    // The binding read through a second block whose elements are the vectors (declared
    // by the template, see `BufferCtx::views`); std430 puts them `words` elements apart.
    fn word_load(&self, buffer: &str, index: &str, _elem: Scalar, words: u32) -> String {
        format!("{}.data[({index}) / {words}u]", self.word_view(buffer, words))
    }

    fn barrier(&self) -> &'static str {
        "barrier()"
    }

    // Cooperative matrices (VK_KHR_cooperative_matrix, 16 × 16 × 16 A, 16 × 8 B and C):
    // the product of the k steps from zero, stored to the group's scratch tile, then
    // added to the accumulators element by element (their layout is general, a
    // cooperative matrix's is not). A and B are read from the u32 arrays, so offsets and
    // strides count words.
    fn mma(&self, m: &super::MmaText) -> Vec<String> {
        let layout_a = if m.a_col_major { "gl_CooperativeMatrixLayoutColumnMajor" } else { "gl_CooperativeMatrixLayoutRowMajor" };
        let a_k = if m.a_col_major { format!("ok_mk * ({})", m.a_stride) } else { "ok_mk".to_string() };
        let acc_t = "coopmat<float, gl_ScopeSubgroup, 16, 8, gl_MatrixUseAccumulator>";
        vec![
            "{".to_string(),
            "    const uint ok_mg = ok_lindex / 32u; const uint ok_ml = ok_lindex % 32u;".to_string(),
            format!("    {acc_t} ok_mc = {acc_t}(0.0);"),
            "    subgroupMemoryBarrierShared(); subgroupBarrier();".to_string(),
            format!("    for (uint ok_mk = 0u; ok_mk < {}u; ok_mk += 16u) {{", m.k),
            "        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> ok_ma;".to_string(),
            "        coopmat<float16_t, gl_ScopeSubgroup, 16, 8, gl_MatrixUseB> ok_mb;".to_string(),
            format!("        coopMatLoad(ok_ma, {}, ({} + {a_k}) / 2u, ({}) / 2u, {layout_a});", m.a, m.a_index, m.a_stride),
            // B's 16 × 8 tile through the group's scratch: columns past `cols` are zeros
            // and need not lie in the array.
            "        for (uint ok_mw = ok_ml; ok_mw < 64u; ok_mw += 32u) {".to_string(),
            format!("            const uint ok_mj = ok_mw / 8u; ok_mma_b[ok_mg * 64u + ok_mw] = ok_mj < {} ? {}[({} + ok_mj * ({}) + ok_mk) / 2u + ok_mw % 8u] : 0u;", m.cols, m.b, m.b_index, m.b_stride),
            "        }".to_string(),
            "        subgroupMemoryBarrierShared(); subgroupBarrier();".to_string(),
            "        coopMatLoad(ok_mb, ok_mma_b, ok_mg * 64u, 8u, gl_CooperativeMatrixLayoutColumnMajor);".to_string(),
            "        ok_mc = coopMatMulAdd(ok_ma, ok_mb, ok_mc);".to_string(),
            "        subgroupMemoryBarrierShared(); subgroupBarrier();".to_string(),
            "    }".to_string(),
            "    coopMatStore(ok_mc, ok_mma_c, ok_mg * 128u, 8u, gl_CooperativeMatrixLayoutRowMajor);".to_string(),
            "    subgroupMemoryBarrierShared(); subgroupBarrier();".to_string(),
            "    for (uint ok_me = ok_ml; ok_me < 128u; ok_me += 32u) {".to_string(),
            "        const uint ok_mi = ok_me / 8u; const uint ok_mj = ok_me % 8u;".to_string(),
            format!(
                "        if (ok_mj < {}) {{ const uint ok_mx = {} + ok_mi * ({}) + ok_mj * ({}); {acc}[ok_mx] = {acc}[ok_mx] + ok_mma_c[ok_mg * 128u + ok_me]; }}",
                m.cols, m.acc_index, m.acc_row_stride, m.acc_col_stride, acc = m.acc
            ),
            "    }".to_string(),
            "    subgroupMemoryBarrierShared(); subgroupBarrier();".to_string(),
            "}".to_string(),
        ]
    }

    fn shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String {
        format!("shared {} {name}[{len}]", self.scalar(elem))
    }

    fn array_decl(&self, elem: Scalar, name: &str, len: u32, elems: &[String]) -> String {
        let t = self.scalar(elem);
        format!("{t} {name}[{len}] = {t}[{len}]({})", elems.join(", "))
    }

    fn count_ones(&self, e: &str) -> String {
        format!("uint(bitCount({e}))")
    }

    fn fast_exp(&self, e: &str) -> String {
        format!("exp({e})")
    }

    fn function_prefix(&self) -> &'static str {
        ""
    }
}
