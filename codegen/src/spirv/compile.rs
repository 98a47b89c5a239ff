//! shaderc compilation of generated GLSL.

use crate::error::CodegenError;

/// The Vulkan version the modules target: 1.1 (SPIR-V 1.3) is enough for 8/16-bit
/// storage through extensions and runs on lavapipe and every current driver.
pub const TARGET_ENV: &str = "vulkan1.1";

/// Compiles GLSL compute source to SPIR-V words. Optimization is off: the modules stay
/// a literal translation (drivers optimize anyway), which keeps them reviewable and
/// leaves no room for an optimizer to reassociate floating point.
pub fn compile(kernel: &str, glsl: &str) -> Result<Vec<u32>, CodegenError> {
    let err = |message: String| CodegenError::Glsl { kernel: kernel.to_string(), message };
    let compiler = shaderc::Compiler::new().map_err(|e| err(format!("shaderc is unavailable: {e}")))?;
    let mut opts = shaderc::CompileOptions::new().map_err(|e| err(format!("shaderc options: {e}")))?;
    opts.set_target_env(shaderc::TargetEnv::Vulkan, shaderc::EnvVersion::Vulkan1_1 as u32);
    opts.set_target_spirv(shaderc::SpirvVersion::V1_3);
    opts.set_source_language(shaderc::SourceLanguage::GLSL);
    opts.set_optimization_level(shaderc::OptimizationLevel::Zero);
    let file = format!("{kernel}.comp");
    let artifact = compiler.compile_into_spirv(glsl, shaderc::ShaderKind::Compute, &file, "main", Some(&opts)).map_err(|e| err(e.to_string()))?;
    Ok(artifact.as_binary().to_vec())
}
