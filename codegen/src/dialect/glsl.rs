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

    fn buffer_load(&self, name: &str, elem: StorageType, index: &str) -> String {
        let raw = format!("{name}.data[{index}]");
        match elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => raw,
            StorageType::F16 => format!("ok_f16_to_f32(uint({raw}))"),
            StorageType::Bf16 => format!("ok_bf16_to_f32(uint({raw}))"),
            StorageType::U8 | StorageType::U16 => format!("uint({raw})"),
            StorageType::I8 => format!("int({raw})"),
        }
    }

    fn buffer_store(&self, name: &str, elem: StorageType, index: &str, value: &str) -> String {
        let v = match elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => value.to_string(),
            StorageType::F16 => format!("uint16_t(ok_f32_to_f16({value}))"),
            StorageType::Bf16 => format!("uint16_t(ok_f32_to_bf16({value}))"),
            StorageType::U16 => format!("uint16_t({value})"),
            StorageType::U8 => format!("uint8_t({value})"),
            StorageType::I8 => format!("int8_t({value})"),
        };
        format!("{name}.data[{index}] = {v}")
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

    fn barrier(&self) -> &'static str {
        "barrier()"
    }

    fn shared_decl(&self, elem: Scalar, name: &str, len: u32) -> String {
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
