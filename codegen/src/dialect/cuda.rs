//! CUDA C++ compiled by NVRTC (`--fmad=false`) or nvcc.

use super::{CopyText, Dialect, FieldText, SignatureBuffer};
use onekernel_dsl::ir::Access;
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::ir::{TileReduce, TileRole};
use onekernel_dsl::types::{Scalar, StorageType};

/// The CUDA dialect.
pub struct Cuda;

impl Dialect for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn template(&self) -> &'static str {
        "cuda/kernel.cu.tera"
    }

    fn backend(&self) -> &'static str {
        "cuda"
    }

    fn kernel_signature(&self, kernel: &str, buffers: &[SignatureBuffer], push: bool) -> (Vec<String>, Vec<String>) {
        let mut params: Vec<String> = Vec::new();
        let mut args: Vec<String> = Vec::new();
        for b in buffers {
            let c = if b.access == Access::ReadOnly { "const " } else { "" };
            params.push(format!("{c}{}* __restrict__ {}", self.storage_type(b.elem), b.name));
            args.push(b.name.to_string());
        }
        if push {
            params.push(format!("const ok_push_{kernel} pc"));
            args.push("pc".into());
        }
        (params, args)
    }

    fn has_dynamic_shared(&self) -> bool {
        true
    }

    fn scalar(&self, s: Scalar) -> &'static str {
        match s {
            Scalar::F32 => "float",
            Scalar::I32 => "int",
            Scalar::U32 => "unsigned int",
            Scalar::Bool => "bool",
        }
    }

    fn float_suffix(&self) -> &'static str {
        "f"
    }

    fn builtin(&self, b: Builtin, axis: u8) -> String {
        let c = ["x", "y", "z"][axis as usize];
        match b {
            Builtin::LocalId => format!("threadIdx.{c}"),
            Builtin::GroupId => format!("blockIdx.{c}"),
            Builtin::GlobalId => format!("(blockIdx.{c} * blockDim.{c} + threadIdx.{c})"),
            Builtin::NumGroups => format!("gridDim.{c}"),
            Builtin::WorkgroupSize => format!("blockDim.{c}"),
        }
    }

    fn local_linear_id(&self) -> &'static str {
        "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
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
            StorageType::U32 => "unsigned int",
            StorageType::F16 | StorageType::Bf16 | StorageType::U16 => "unsigned short",
            StorageType::U8 => "unsigned char",
            StorageType::I8 => "signed char",
        }
    }

    fn buffer_element(&self, name: &str, index: &str) -> String {
        format!("{name}[{index}]")
    }

    fn narrow(&self, t: StorageType, value: &str) -> String {
        format!("({})({value})", self.storage_type(t))
    }

    fn bitcast(&self, from: Scalar, to: Scalar, e: &str) -> String {
        match (from, to) {
            (Scalar::F32, Scalar::U32) => format!("__float_as_uint({e})"),
            (Scalar::F32, Scalar::I32) => format!("__float_as_int({e})"),
            (Scalar::U32, Scalar::F32) => format!("__uint_as_float({e})"),
            (Scalar::I32, Scalar::F32) => format!("__int_as_float({e})"),
            (a, b) if a == b => e.to_string(),
            (_, to) => format!("(({}){e})", self.scalar(to)),
        }
    }

    fn cast(&self, from: Scalar, to: Scalar, e: &str) -> String {
        if from == to {
            return e.to_string();
        }
        format!("(({}){e})", self.scalar(to))
    }

    fn wrapping_i32(&self, op: &str, a: &str, b: Option<&str>) -> String {
        match b {
            Some(b) => format!("((int)((unsigned int){a} {op} (unsigned int){b}))"),
            None => format!("((int)(0u {op} (unsigned int){a}))"),
        }
    }

    fn word_vector(&self, elem: Scalar, words: u32) -> String {
        let base = match elem {
            Scalar::F32 => "float",
            Scalar::I32 => "int",
            _ => "uint",
        };
        format!("{base}{words}")
    }

    fn word_load(&self, buffer: &str, index: &str, elem: Scalar, words: u32) -> String {
        format!("*reinterpret_cast<const {}*>(&{buffer}[{index}])", self.word_vector(elem, words))
    }

    fn word_store_place(&self, buffer: &str, index: &str, elem: Scalar, words: u32) -> Option<String> {
        Some(format!("*reinterpret_cast<{}*>(&{buffer}[{index}])", self.word_vector(elem, words)))
    }

    // Shared arrays are declared 16-byte aligned (`shared_decl`), so an index that is a
    // multiple of `words` is an aligned vector: nvcc then emits one `LDS.64` / `LDS.128`
    // even where it cannot prove the alignment itself.
    fn shared_word_load(&self, array: &str, index: &str, elem: Scalar, words: u32) -> Option<String> {
        Some(self.word_load(array, index, elem, words))
    }

    fn async_copy(&self, c: &CopyText) -> Vec<String> {
        let past_l1 = if c.bypass_l1 { "_past_l1" } else { "" };
        vec![format!("ok_async_copy{}{past_l1}(&{}[{}], &{}[{}]);", 4 * c.words, c.dst, c.dst_index, c.src, c.src_index)]
    }

    fn async_commit(&self) -> Option<&'static str> {
        Some("ok_async_commit();")
    }

    fn async_wait(&self, pending: u32) -> Option<String> {
        Some(format!("ok_async_wait<{pending}>();"))
    }

    fn unroll_hint(&self) -> Option<&'static str> {
        Some("#pragma unroll")
    }

    fn device_fence(&self) -> &'static str {
        "__threadfence();"
    }

    fn arrival_atomics(&self, counter: &str) -> (String, String) {
        (format!("atomicAdd(&{counter}, 1u)"), format!("atomicExch(&{counter}, 0u)"))
    }

    fn barrier(&self) -> &'static str {
        "__syncthreads()"
    }

    // Tiles are mma.sync m16n8k16 fragments in registers (templates/cuda/tile.cuh):
    // operands four 32-bit registers of f16 pairs per invocation, accumulators eight f32.
    fn tile_decl(&self, role: TileRole, name: &str) -> String {
        match role {
            TileRole::Acc => format!("float {name}[8]"),
            _ => format!("unsigned int {name}[4]"),
        }
    }

    fn tile_fill(&self, name: &str, value: &str, scale: bool) -> Vec<String> {
        vec![format!("ok_tile_{}({name}, {value});", if scale { "scale" } else { "fill" })]
    }

    fn tile_mma(&self, acc: &str, a: &str, b: &str) -> Vec<String> {
        vec![format!("ok_tile_mma({acc}, {a}, {b});")]
    }

    fn tile_load(&self, role: TileRole, name: &str, m: &super::TileMemory) -> Vec<String> {
        let (index, stride, col) = (&m.index, &m.stride, m.col_major);
        let f = match (role, m.shared) {
            (TileRole::Acc, _) => format!("ok_tile_load_f32<{col}>"),
            (_, true) => format!("ok_tile_ldmatrix<{}, {col}>", role == TileRole::B),
            (_, false) => format!("ok_tile_load_f16<{}, {col}>", role == TileRole::B),
        };
        let sync = if m.fence { "__syncwarp(); " } else { "" };
        vec![format!("{sync}{f}({name}, {}, {index}, {stride}, ok_lindex);", m.array)]
    }

    fn tile_store(&self, name: &str, m: &super::TileMemory) -> Vec<String> {
        // The warp's loads of this memory before its stores, the stores before its reads.
        let sync = if m.shared { "__syncwarp(); " } else { "" };
        vec![format!("{sync}ok_tile_store_f32<{}>({name}, {}, {}, {}, ok_lindex);{}", m.col_major, m.array, m.index, m.stride, sync.trim_end())]
    }

    // Element access reads the fragments' registers: no memory, no scratch.
    fn tile_get(&self, vals: &str, tile: &str, _scratch: &super::TileMemory) -> Vec<String> {
        vec![format!("ok_tile_get({vals}, {tile});")]
    }

    fn tile_set(&self, role: TileRole, tile: &str, vals: &str, _scratch: &super::TileMemory) -> Vec<String> {
        let f = if role == TileRole::Acc { "ok_tile_set_acc" } else { "ok_tile_set_a" };
        vec![format!("{f}({tile}, {vals});")]
    }

    fn tile_coords(&self, rows: &str, cols: &str) -> Vec<String> {
        vec![format!("ok_tile_coords({rows}, {cols}, ok_lindex);")]
    }

    fn tile_reduce(&self, vals: &str, op: TileReduce) -> Vec<String> {
        let f = match op {
            TileReduce::RowMax => "ok_tile_row_max",
            TileReduce::RowSum => "ok_tile_row_sum",
            TileReduce::AllMax => "ok_tile_all_max",
        };
        vec![format!("{f}({vals});")]
    }

    // One wgmma of the warpgroup on sm_90a, ldmatrix and mma.sync before
    // (templates/cuda/tile.cuh); the panel is in the 128-byte swizzle.
    // Eight accumulators: one wgmma m64n128k16 (`ok_tile_mma_panel8`).
    fn tile_mma_panel(&self, p: &super::PanelMma) -> Vec<String> {
        let helper = if p.accs.len() == 8 { "ok_tile_mma_panel8" } else { "ok_tile_mma_panel" };
        vec![format!(
            "{helper}<{}>({}, {}, {}, {}, {}, {}, {}, ok_lindex);",
            p.by_rows,
            p.accs.join(", "),
            p.a,
            p.array,
            p.base,
            p.rows,
            p.row0,
            p.col0
        )]
    }

    // The wait, then every tile named as an operand of an empty asm: no access to a tile
    // a wgmma may still write (or read) moves above the wait.
    fn tile_mma_wait(&self, tiles: &[(TileRole, String)]) -> Vec<String> {
        let mut line = String::from("ok_tile_mma_wait();");
        for (role, name) in tiles {
            match role {
                TileRole::Acc => line.push_str(&format!(" ok_tile_fence_acc({name});")),
                TileRole::A => line.push_str(&format!(" ok_tile_fence_a({name});")),
                TileRole::B => {}
            }
        }
        vec![line]
    }

    fn panel_barrier(&self) -> &'static str {
        "ok_panel_barrier()"
    }

    fn panel_shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String {
        format!("__shared__ __align__(1024) {} {name}[{len}]", self.scalar(elem))
    }

    fn shared_decl(&self, elem: Scalar, name: &str, len: &str) -> String {
        // 16-byte aligned, so that adjacent accesses at provably aligned indices can be
        // vectorized by the compiler (docs/CODEGEN.md).
        format!("__shared__ __align__(16) {} {name}[{len}]", self.scalar(elem))
    }

    fn array_decl(&self, elem: Scalar, name: &str, len: u32, elems: &[String]) -> String {
        format!("{} {name}[{len}] = {{{}}}", self.scalar(elem), elems.join(", "))
    }

    fn count_ones(&self, e: &str) -> String {
        format!("((unsigned int)__popc((unsigned int){e}))")
    }

    // ex2.approx.ftz of x·log2(e): two instructions where the portable `exp` takes ~160
    // (`__expf` without flush-to-zero adds a range test and a squaring for results
    // below 2^-126).
    fn fast_exp(&self, e: &str) -> String {
        format!("ok_fast_exp({e})")
    }

    fn fast_exp2(&self, e: &str) -> String {
        format!("ok_fast_exp2({e})")
    }

    // NVRTC scales `base + field` to bytes after the mask, an LEA and an add per read
    // beside the shift and mask (QJL's nibble lookups: 6.4 instructions each where 4 do;
    // docs/CODEGEN.md); as a byte offset the scaling is the field's shift and mask, and
    // `4·base` an immediate of the shared-memory load when `base` is constant.
    fn shared_field_load(&self, array: &str, elem: Scalar, f: &FieldText) -> Option<String> {
        let FieldText { base, x, k, k_value, mask } = f;
        if elem == Scalar::Bool || *mask >= 1 << 29 {
            return None;
        }
        let field = match *k_value {
            Some(v) if v >= 2 => format!("({x} >> {}u)", v - 2),
            Some(v) => format!("({x} << {}u)", 2 - v),
            None => format!("(({k}) >= 2u ? ({x} >> (({k}) - 2u)) : ({x} << (2u - ({k}))))"),
        };
        Some(format!("(*(const {t}*)((const char*){array} + ({base}) * 4u + ({field} & {}u)))", mask << 2, t = self.scalar(elem)))
    }

    fn function_prefix(&self) -> &'static str {
        "static __device__ __forceinline__ "
    }
}

#[cfg(test)]
mod tests {
    use super::{Cuda, Dialect, FieldText};
    use onekernel_dsl::types::Scalar;

    /// The byte offset `shared_field_load` prints for the field `(x >> k) & mask`, in Rust.
    fn printed_field(x: u32, k: u32, mask: u32) -> u32 {
        (if k >= 2 { x >> (k - 2) } else { x << (2 - k) }) & (mask << 2)
    }

    #[test]
    fn a_field_scaled_inside_its_mask_is_four_times_the_field() {
        let mut x = 0x9e37_79b9u32;
        for k in 0..32 {
            for bits in 1..=8 {
                let mask = (1u32 << bits) - 1;
                for _ in 0..64 {
                    x = x.wrapping_mul(0x2c1b_3c6d).wrapping_add(0x297a_2d39);
                    assert_eq!(printed_field(x, k, mask), ((x >> k) & mask) * 4, "x {x:#x}, k {k}, mask {mask}");
                }
            }
        }
    }

    #[test]
    fn word_arrays_read_a_field_at_a_byte_offset_and_nothing_else_does() {
        let load = |elem, k: &str, k_value, mask| {
            Cuda.shared_field_load("sh_t", elem, &FieldText { base: "(p * 17u)".into(), x: "w".into(), k: k.into(), k_value, mask })
        };
        assert_eq!(
            load(Scalar::F32, "4u", Some(4), 15).as_deref(),
            Some("(*(const float*)((const char*)sh_t + ((p * 17u)) * 4u + ((w >> 2u) & 60u)))")
        );
        assert_eq!(
            load(Scalar::U32, "0u", Some(0), 31).as_deref(),
            Some("(*(const unsigned int*)((const char*)sh_t + ((p * 17u)) * 4u + ((w << 2u) & 124u)))")
        );
        assert_eq!(load(Scalar::I32, "1u", Some(1), 1).as_deref(), Some("(*(const int*)((const char*)sh_t + ((p * 17u)) * 4u + ((w << 1u) & 4u)))"));
        // A shift known only at run time chooses its direction there.
        assert_eq!(
            load(Scalar::F32, "(4u * n)", None, 15).as_deref(),
            Some("(*(const float*)((const char*)sh_t + ((p * 17u)) * 4u + ((((4u * n)) >= 2u ? (w >> (((4u * n)) - 2u)) : (w << (2u - ((4u * n))))) & 60u)))")
        );
        // One-byte booleans and masks whose scaled form would not fit keep the index.
        assert_eq!(load(Scalar::Bool, "4u", Some(4), 15), None);
        assert_eq!(load(Scalar::F32, "4u", Some(4), (1 << 29) | ((1 << 29) - 1)), None);
    }
}
