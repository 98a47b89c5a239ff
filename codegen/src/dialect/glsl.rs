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

    fn function_prefix(&self) -> &'static str {
        ""
    }
}
