//! GLSL 450 for Vulkan, compiled to SPIR-V by shaderc.

use super::row_pairs;
use super::Dialect;
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::ir::{TileReduce, TileRole};
use onekernel_dsl::types::{Scalar, StorageType};

/// The GLSL dialect.
pub struct Glsl;

/// Orders a subgroup's shared-memory accesses around a tile load or store.
const SUBGROUP_SYNC: &str = "subgroupMemoryBarrierShared(); subgroupBarrier();";

/// The cooperative-matrix type of a tile.
fn coopmat_type(role: TileRole) -> &'static str {
    match role {
        TileRole::A => "coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>",
        TileRole::B => "coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>",
        TileRole::Acc => "coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>",
    }
}

fn coopmat_layout(col_major: bool) -> &'static str {
    if col_major {
        "gl_CooperativeMatrixLayoutColumnMajor"
    } else {
        "gl_CooperativeMatrixLayoutRowMajor"
    }
}

impl Glsl {
    /// The array a tile moves through: a shared array, or a buffer block's `data`.
    fn tile_array(&self, m: &super::TileMemory) -> String {
        if m.shared {
            m.array.clone()
        } else {
            format!("{}.data", m.array)
        }
    }
}

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

    fn device_fence(&self) -> &'static str {
        // On the buffers a kernel with arrivals reads, which it declares `coherent`.
        "memoryBarrierBuffer();"
    }

    fn arrival_atomics(&self, counter: &str) -> (String, String) {
        (format!("atomicAdd({counter}, 1u)"), format!("atomicExchange({counter}, 0u)"))
    }

    fn barrier(&self) -> &'static str {
        "barrier()"
    }

    // Tiles are cooperative matrices of the subgroup (VK_KHR_cooperative_matrix), 16 × 16,
    // f16 operands and f32 accumulators. Operands load from `f16vec2` arrays (the shared
    // arrays they come from are declared so, buffers viewed so), so their index and stride
    // count pairs (the DSL's f16 counts are even). Subgroup barriers order the
    // group's own shared-memory accesses around a load and a store: the invocations'
    // writes before a load, every load before a store, a store before their reads.
    fn tile_decl(&self, role: TileRole, name: &str) -> String {
        format!("{} {name}", coopmat_type(role))
    }

    fn halves_type(&self) -> Option<&'static str> {
        Some("f16vec2")
    }

    fn halves_shared_decl(&self, name: &str, len: &str) -> Option<String> {
        Some(format!("shared f16vec2 {name}[{len}]"))
    }

    fn word_from_halves(&self, e: &str) -> String {
        format!("packFloat2x16({e})")
    }

    fn halves_from_word(&self, e: &str) -> String {
        format!("unpackFloat2x16({e})")
    }

    fn tile_fill(&self, name: &str, value: &str, scale: bool) -> Vec<String> {
        if scale {
            vec![format!("{name} = {name} * ({value});")]
        } else {
            vec![format!("{name} = {}({value});", coopmat_type(TileRole::Acc))]
        }
    }

    fn tile_mma(&self, acc: &str, a: &str, b: &str) -> Vec<String> {
        vec![format!("{acc} = coopMatMulAdd({a}, {b}, {acc});")]
    }

    fn tile_load(&self, role: TileRole, name: &str, m: &super::TileMemory) -> Vec<String> {
        let layout = coopmat_layout(m.col_major);
        let (index, stride) = match role {
            TileRole::Acc => (m.index.clone(), m.stride.clone()),
            _ => (format!("({}) / 2u", m.index), format!("({}) / 2u", m.stride)),
        };
        let mut lines = Vec::new();
        if m.fence {
            lines.push(SUBGROUP_SYNC.to_string());
        }
        // Operands from a buffer through its `f16vec2` view (shared arrays are declared so).
        let array = if role != TileRole::Acc && !m.shared { format!("{}.data", self.halves_view(&m.array)) } else { self.tile_array(m) };
        lines.push(format!("coopMatLoad({name}, {array}, {index}, {stride}, {layout});"));
        lines
    }

    fn tile_store(&self, name: &str, m: &super::TileMemory) -> Vec<String> {
        let mut lines = Vec::new();
        if m.shared {
            lines.push(SUBGROUP_SYNC.to_string());
        }
        lines.push(format!("coopMatStore({name}, {}, {}, {}, {});", self.tile_array(m), m.index, m.stride, coopmat_layout(m.col_major)));
        if m.shared {
            lines.push(SUBGROUP_SYNC.to_string());
        }
        lines
    }

    // The cooperative matrix's own element order is unspecified: slots go through the
    // scratch (docs/CODEGEN.md, "Register tiles").
    fn tile_get(&self, vals: &str, tile: &str, scratch: &super::TileMemory) -> Vec<String> {
        let mut lines = self.tile_store(tile, scratch);
        let at = row_pairs::slot_index(&scratch.index, &scratch.stride, "ok_e");
        lines.push(format!("[[unroll]] for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {vals}[ok_e] = {}[{at}]; }}", scratch.array));
        lines
    }

    fn tile_set(&self, role: TileRole, tile: &str, vals: &str, scratch: &super::TileMemory) -> Vec<String> {
        let mut lines = vec![SUBGROUP_SYNC.to_string()];
        if role == TileRole::Acc {
            let at = row_pairs::slot_index(&scratch.index, &scratch.stride, "ok_e");
            lines.push(format!("[[unroll]] for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {}[{at}] = {vals}[ok_e]; }}", scratch.array));
        } else {
            // The scratch is declared as f16 pairs (the operand's component type).
            let at = row_pairs::slot_index(&scratch.index, &scratch.stride, "2u * ok_q");
            lines.push(format!(
                "[[unroll]] for (uint ok_q = 0u; ok_q < 4u; ok_q++) {{ {}[({at}) / 2u] = f16vec2(float16_t({vals}[2u * ok_q]), float16_t({vals}[2u * ok_q + 1u])); }}",
                scratch.array
            ));
        }
        // The scratch is row-major (the printer passes it so); the load follows the writes.
        lines.extend(self.tile_load(role, tile, &super::TileMemory { fence: true, ..scratch.clone() }));
        lines
    }

    fn tile_coords(&self, rows: &str, cols: &str) -> Vec<String> {
        row_pairs::coords(rows, cols, "[[unroll]] ")
    }

    fn tile_reduce(&self, vals: &str, op: TileReduce) -> Vec<String> {
        row_pairs::reduce(vals, op, &|v, m| format!("subgroupShuffleXor({v}, {m}u)"), "[[unroll]] ")
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

    fn fast_exp2(&self, e: &str) -> String {
        format!("exp2({e})")
    }

    fn function_prefix(&self) -> &'static str {
        ""
    }
}
