//! Metal Shading Language, compiled on macOS with safe math and contraction off.

use super::Dialect;
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::types::{Scalar, StorageType};

/// The MSL dialect.
pub struct Msl;

impl Dialect for Msl {
    fn name(&self) -> &'static str {
        "msl"
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
        "f"
    }

    fn builtin(&self, b: Builtin, axis: u8) -> String {
        let c = ["x", "y", "z"][axis as usize];
        match b {
            Builtin::LocalId => format!("ok_lid.{c}"),
            Builtin::GroupId => format!("ok_gid.{c}"),
            Builtin::GlobalId => format!("(ok_gid.{c} * ok_wg.{c} + ok_lid.{c})"),
            Builtin::NumGroups => format!("ok_ngroups.{c}"),
            Builtin::WorkgroupSize => format!("ok_wg.{c}"),
        }
    }

    fn local_linear_id(&self) -> &'static str {
        "ok_lindex"
    }

    fn push_ref(&self, p: &Param) -> String {
        format!("pc.{}", p.name)
    }

    fn spec_ref(&self, p: &Param) -> String {
        format!("{}_v", p.name)
    }

    fn buffer_load(&self, name: &str, elem: StorageType, index: &str) -> String {
        let raw = format!("{name}[{index}]");
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
            StorageType::F16 => format!("ushort(ok_f32_to_f16({value}))"),
            StorageType::Bf16 => format!("ushort(ok_f32_to_bf16({value}))"),
            StorageType::U16 => format!("ushort({value})"),
            StorageType::U8 => format!("uchar({value})"),
            StorageType::I8 => format!("char({value})"),
        };
        format!("{name}[{index}] = {v}")
    }

    fn bitcast(&self, from: Scalar, to: Scalar, e: &str) -> String {
        if from == to {
            return e.to_string();
        }
        format!("as_type<{}>({e})", self.scalar(to))
    }

    fn wrapping_i32(&self, op: &str, a: &str, b: Option<&str>) -> String {
        match b {
            Some(b) => format!("int(uint({a}) {op} uint({b}))"),
            None => format!("int(0u {op} uint({a}))"),
        }
    }

    fn barrier(&self) -> &'static str {
        "threadgroup_barrier(mem_flags::mem_threadgroup)"
    }

    fn shared_decl(&self, elem: Scalar, name: &str, len: u32) -> String {
        format!("threadgroup {} {name}[{len}]", self.scalar(elem))
    }

    fn array_decl(&self, elem: Scalar, name: &str, len: u32, elems: &[String]) -> String {
        format!("{} {name}[{len}] = {{{}}}", self.scalar(elem), elems.join(", "))
    }

    fn count_ones(&self, e: &str) -> String {
        format!("uint(popcount({e}))")
    }

    fn function_prefix(&self) -> &'static str {
        "static inline "
    }
}
