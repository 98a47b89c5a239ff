//! GLSL → SPIR-V: compile with shaderc (built from source, so every machine produces
//! the same words), decorate every float operation `NoContraction`, validate with
//! spirv-val, check every specialized variant again with naga (a second, independent
//! front end and validator) and reflect the interface with rspirv.

mod compile;
mod naga_check;
mod nocontract;
mod reflect;
mod specialize;
mod validate;

pub use compile::{compile, TARGET_ENV};
pub use naga_check::{check as naga_check, NagaVerdict};
pub use nocontract::forbid_contraction;
pub use reflect::{reflect, Reflection};
pub use specialize::{specialize, SpecValue};
pub use validate::validate;

/// Little-endian bytes of a word stream (the `.spv` file format).
pub fn to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
