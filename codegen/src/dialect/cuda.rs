//! CUDA C++ compiled by NVRTC (`--fmad=false`) or nvcc.

use super::Dialect;
use onekernel_dsl::ir::{Builtin, Param};
use onekernel_dsl::types::{Scalar, StorageType};

/// The CUDA dialect.
pub struct Cuda;

impl Dialect for Cuda {
    fn name(&self) -> &'static str {
        "cuda"
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

    // Shared arrays are declared 16-byte aligned (`shared_decl`), so an index that is a
    // multiple of `words` is an aligned vector: nvcc then emits one `LDS.64` / `LDS.128`
    // even where it cannot prove the alignment itself.
    fn shared_word_load(&self, array: &str, index: &str, elem: Scalar, words: u32) -> Option<String> {
        Some(self.word_load(array, index, elem, words))
    }

    fn async_copy(&self, dst: &str, dst_index: &str, src: &str, src_index: &str, words: u32) -> Vec<String> {
        vec![format!("ok_async_copy{}(&{dst}[{dst_index}], &{src}[{src_index}]);", 4 * words)]
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

    fn barrier(&self) -> &'static str {
        "__syncthreads()"
    }

    // Tensor cores through the template's helper (ldmatrix + mma.sync m16n8k16).
    fn mma(&self, m: &super::MmaText) -> Vec<String> {
        vec![format!(
            "ok_mma_f16<{}u, {}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, ok_lindex);",
            m.k, m.a_col_major, m.acc, m.acc_index, m.acc_row_stride, m.acc_col_stride, m.cols, m.a, m.a_index, m.a_stride, m.b, m.b_index, m.b_stride
        )]
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

    // ex2.approx of x·log2(e): two instructions where the portable `exp` takes ~160.
    fn fast_exp(&self, e: &str) -> String {
        format!("__expf({e})")
    }

    fn function_prefix(&self) -> &'static str {
        "static __device__ __forceinline__ "
    }
}
