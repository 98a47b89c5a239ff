//! spirv-val, in-process.

use crate::error::CodegenError;
use spirv_tools::val::Validator;

/// Validates a module for the Vulkan 1.1 environment.
pub fn validate(kernel: &str, words: &[u32]) -> Result<(), CodegenError> {
    let v = spirv_tools::val::create(Some(spirv_tools::TargetEnv::Vulkan_1_1));
    v.validate(words, None).map_err(|e| CodegenError::SpirvInvalid {
        kernel: kernel.to_string(),
        target: super::TARGET_ENV,
        message: e.to_string(),
    })
}
