//! Metal Shading Language, compiled on macOS with safe math and contraction off.

use super::row_pairs;
use super::{Dialect, SignatureBuffer};
use onekernel_dsl::ir::{Access, TileReduce, TileRole};
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::types::{Scalar, StorageType};

/// The MSL dialect.
pub struct Msl;

/// Orders a SIMD group's threadgroup-memory accesses around a tile load or store.
const MSL_SIMD_SYNC: &str = "simdgroup_barrier(mem_flags::mem_threadgroup)";

impl Dialect for Msl {
    fn name(&self) -> &'static str {
        "msl"
    }

    fn template(&self) -> &'static str {
        "msl/kernel.metal.tera"
    }

    fn backend(&self) -> &'static str {
        "metal"
    }

    fn kernel_signature(&self, kernel: &str, buffers: &[SignatureBuffer], push: bool) -> (Vec<String>, Vec<String>) {
        let mut params: Vec<String> = Vec::new();
        for (i, b) in buffers.iter().enumerate() {
            let c = if b.access == Access::ReadOnly { "const " } else { "" };
            let coherent = if b.coherent { "coherent(device) " } else { "" };
            params.push(format!("{coherent}device {c}{}* {} [[buffer({i})]]", self.storage_type(b.elem), b.name));
        }
        if push {
            params.push(format!("constant ok_push_{kernel}& pc [[buffer({})]]", buffers.len()));
        }
        params.extend(
            [
                "uint3 ok_lid [[thread_position_in_threadgroup]]",
                "uint3 ok_gid [[threadgroup_position_in_grid]]",
                "uint3 ok_ngroups [[threadgroups_per_grid]]",
                "uint3 ok_wg [[threads_per_threadgroup]]",
                "uint ok_lindex [[thread_index_in_threadgroup]]",
            ]
            .map(String::from),
        );
        (params, Vec::new())
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

    fn storage_type(&self, t: StorageType) -> &'static str {
        match t {
            StorageType::F32 => "float",
            StorageType::I32 => "int",
            StorageType::U32 => "uint",
            StorageType::F16 | StorageType::Bf16 | StorageType::U16 => "ushort",
            StorageType::U8 => "uchar",
            StorageType::I8 => "char",
        }
    }

    fn buffer_element(&self, name: &str, index: &str) -> String {
        format!("{name}[{index}]")
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

    fn word_vector(&self, elem: Scalar, words: u32) -> String {
        format!("{}{words}", self.scalar(elem))
    }

    fn word_load(&self, buffer: &str, index: &str, elem: Scalar, words: u32) -> String {
        format!("*((device const {}*)(&{buffer}[{index}]))", self.word_vector(elem, words))
    }

    fn word_store_place(&self, buffer: &str, index: &str, elem: Scalar, words: u32) -> Option<String> {
        Some(format!("*((device {}*)(&{buffer}[{index}]))", self.word_vector(elem, words)))
    }

    fn device_fence(&self) -> &'static str {
        // MSL 3.2's device-scope fence, on the buffers a kernel with arrivals reads,
        // which it declares `coherent(device)`.
        "atomic_thread_fence(mem_flags::mem_device, memory_order_seq_cst, thread_scope_device);"
    }

    fn arrival_atomics(&self, counter: &str) -> (String, String) {
        let atomic = format!("(device atomic_uint*)&{counter}");
        (
            format!("atomic_fetch_add_explicit({atomic}, 1u, memory_order_relaxed)"),
            format!("atomic_store_explicit({atomic}, 0u, memory_order_relaxed)"),
        )
    }

    fn barrier(&self) -> &'static str {
        "threadgroup_barrier(mem_flags::mem_threadgroup)"
    }

    // Tiles are 2 × 2 blocks of the SIMD group's 8 × 8 `simdgroup_matrix` values
    // (templates/msl/tile.metal); Apple GPUs' SIMD groups are 32 wide, one group each.
    // Operands load through `half` pointers to the u32 arrays; SIMD-group barriers order
    // the group's threadgroup-memory accesses around loads and stores (as GLSL's).
    fn tile_decl(&self, role: TileRole, name: &str) -> String {
        match role {
            TileRole::Acc => format!("simdgroup_float8x8 {name}[4]"),
            _ => format!("simdgroup_half8x8 {name}[4]"),
        }
    }

    fn tile_fill(&self, name: &str, value: &str, scale: bool) -> Vec<String> {
        vec![format!("ok_tile_{}({name}, {value});", if scale { "scale" } else { "fill" })]
    }

    fn tile_mma(&self, acc: &str, a: &str, b: &str) -> Vec<String> {
        vec![format!("ok_tile_mma({acc}, {a}, {b});")]
    }

    fn tile_load(&self, role: TileRole, name: &str, m: &super::TileMemory) -> Vec<String> {
        let ptr = match (role, m.shared, m.read_only) {
            (TileRole::Acc, _, _) => m.array.clone(),
            (_, true, _) => format!("ok_tile_halves_tg({})", m.array),
            (_, false, true) => format!("ok_tile_halves_ro({})", m.array),
            (_, false, false) => format!("ok_tile_halves_rw({})", m.array),
        };
        let mut lines = Vec::new();
        if m.fence {
            lines.push(format!("{};", MSL_SIMD_SYNC));
        }
        lines.push(format!("ok_tile_load({name}, {ptr}, {}, {}, {});", m.index, m.stride, m.col_major));
        lines
    }

    fn tile_store(&self, name: &str, m: &super::TileMemory) -> Vec<String> {
        let mut lines = Vec::new();
        if m.shared {
            lines.push(format!("{};", MSL_SIMD_SYNC));
        }
        lines.push(format!("ok_tile_store({name}, {}, {}, {}, {});", m.array, m.index, m.stride, m.col_major));
        if m.shared {
            lines.push(format!("{};", MSL_SIMD_SYNC));
        }
        lines
    }

    // `simdgroup_matrix` exposes no element order: slots go through the scratch.
    fn tile_get(&self, vals: &str, tile: &str, scratch: &super::TileMemory) -> Vec<String> {
        let mut lines = self.tile_store(tile, scratch);
        let at = row_pairs::slot_index(&scratch.index, &scratch.stride, "ok_e");
        lines.push(format!("for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {vals}[ok_e] = {}[{at}]; }}", scratch.array));
        lines
    }

    fn tile_set(&self, role: TileRole, tile: &str, vals: &str, scratch: &super::TileMemory) -> Vec<String> {
        let mut lines = vec![format!("{};", MSL_SIMD_SYNC)];
        let at = row_pairs::slot_index(&scratch.index, &scratch.stride, "ok_e");
        if role == TileRole::Acc {
            lines.push(format!("for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ {}[{at}] = {vals}[ok_e]; }}", scratch.array));
        } else {
            lines.push(format!("for (uint ok_e = 0u; ok_e < 8u; ok_e++) {{ ok_tile_halves_tg({})[{at}] = half({vals}[ok_e]); }}", scratch.array));
        }
        // The scratch is row-major (the printer passes it so); the load follows the writes.
        lines.extend(self.tile_load(role, tile, &super::TileMemory { fence: true, ..scratch.clone() }));
        lines
    }

    fn tile_coords(&self, rows: &str, cols: &str) -> Vec<String> {
        row_pairs::coords(rows, cols, "")
    }

    fn tile_reduce(&self, vals: &str, op: TileReduce) -> Vec<String> {
        row_pairs::reduce(vals, op, &|v, m| format!("simd_shuffle_xor({v}, (ushort){m})"), "")
    }

    fn shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String {
        format!("threadgroup {} {name}[{len}]", self.scalar(elem))
    }

    fn shared_len(&self, len: u32, _size: Option<String>) -> String {
        // Function constants cannot size threadgroup arrays: every variant gets the
        // largest length.
        len.to_string()
    }

    fn array_decl(&self, elem: Scalar, name: &str, len: u32, elems: &[String]) -> String {
        format!("{} {name}[{len}] = {{{}}}", self.scalar(elem), elems.join(", "))
    }

    fn count_ones(&self, e: &str) -> String {
        format!("uint(popcount({e}))")
    }

    fn fast_exp(&self, e: &str) -> String {
        format!("fast::exp({e})")
    }

    fn fast_exp2(&self, e: &str) -> String {
        format!("fast::exp2({e})")
    }

    fn function_prefix(&self) -> &'static str {
        "static inline "
    }
}
