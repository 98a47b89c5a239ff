//! # onekernel-codegen
//!
//! Turns onekernel IR into CUDA C++, Metal Shading Language and GLSL, compiles the GLSL
//! to SPIR-V in-process with shaderc, validates every module with spirv-val and every
//! specialized variant again with naga, reflects it with rspirv to cross-check the
//! interface against the generator's intent, and writes the manifest the runtime launches from (`docs/MANIFEST.md`).
//!
//! * [`Builder`]: the library API, e.g. for a downstream `build.rs`.
//! * [`analysis`]: [`analysis::KernelInfo`], the facts about a kernel computed once and
//!   read by every dialect and the manifest.
//! * [`dialect`] + [`print`](mod@print): one IR printer, three target spellings.
//! * [`templates`]: the tera templates around the printed body.
//! * [`spirv`]: shaderc, the `NoContraction` pass, spirv-val, specialization, naga,
//!   reflection.
//! * [`manifest`], [`generate`], [`output`]: the artifacts, their index, the check.

pub mod analysis;
pub mod builder;
pub mod dialect;
pub mod error;
pub mod generate;
pub mod helpers;
pub mod manifest;
pub mod output;
pub mod print;
pub mod spirv;
pub mod templates;

pub use analysis::KernelInfo;
pub use builder::Builder;
pub use error::CodegenError;
pub use generate::Generated;
