//! spirv-val, in-process: SPIRV-Tools' validator through its C API.
//!
//! shaderc's vendored build already compiles SPIRV-Tools into the static
//! `libshaderc_combined` that the `shaderc` crate links, so the validator is called from
//! there rather than compiled a second time by another crate (the cold build's largest
//! cost after shaderc itself). The declarations below are `libspirv.h`'s, unchanged since
//! SPIRV-Tools 2016.

use crate::error::CodegenError;
use std::ffi::{c_char, c_int, CStr};

/// `spv_position_t`.
#[repr(C)]
struct Position {
    line: usize,
    column: usize,
    index: usize,
}

/// `spv_diagnostic_t`.
#[repr(C)]
struct Diagnostic {
    position: Position,
    error: *mut c_char,
    is_text_source: bool,
}

/// `spv_context_t`, opaque.
#[repr(C)]
struct Context {
    _private: [u8; 0],
}

/// `SPV_ENV_VULKAN_1_1` of `spv_target_env`.
const SPV_ENV_VULKAN_1_1: c_int = 18;
/// `SPV_SUCCESS` of `spv_result_t`.
const SPV_SUCCESS: c_int = 0;

unsafe extern "C" {
    fn spvContextCreate(env: c_int) -> *mut Context;
    fn spvContextDestroy(context: *mut Context);
    fn spvValidateBinary(context: *const Context, words: *const u32, num_words: usize, diagnostic: *mut *mut Diagnostic) -> c_int;
    fn spvDiagnosticDestroy(diagnostic: *mut Diagnostic);
}

/// Validates a module for the Vulkan 1.1 environment.
pub fn validate(kernel: &str, words: &[u32]) -> Result<(), CodegenError> {
    let err = |message: String| CodegenError::SpirvInvalid { kernel: kernel.to_string(), target: super::TARGET_ENV, message };
    // SAFETY: the context is created, used and destroyed here; `words` outlives the call
    // and its length is passed with it; the diagnostic, when the validator makes one, is
    // read (its message is a NUL-terminated string it owns) and then destroyed once.
    unsafe {
        let context = spvContextCreate(SPV_ENV_VULKAN_1_1);
        if context.is_null() {
            return Err(err("SPIRV-Tools could not create a Vulkan 1.1 context".into()));
        }
        let mut diagnostic: *mut Diagnostic = std::ptr::null_mut();
        let result = spvValidateBinary(context, words.as_ptr(), words.len(), &mut diagnostic);
        spvContextDestroy(context);
        let message = if diagnostic.is_null() || (*diagnostic).error.is_null() {
            None
        } else {
            let d = &*diagnostic;
            Some(format!("{} (word {})", CStr::from_ptr(d.error).to_string_lossy(), d.position.index))
        };
        spvDiagnosticDestroy(diagnostic);
        match (result, message) {
            (SPV_SUCCESS, _) => Ok(()),
            (code, Some(m)) => Err(err(format!("error {code}: {m}"))),
            (code, None) => Err(err(format!("error {code} without a diagnostic"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::validate;

    #[test]
    fn a_compiled_module_passes_and_a_broken_one_is_named() {
        let glsl =
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 0) buffer B { uint x[]; } b;\nvoid main() { b.x[0] = 1u; }\n";
        let words = super::super::compile("tiny", glsl).unwrap();
        validate("tiny", &words).unwrap();
        // The same module with its bound (word 3) too small for its ids.
        let mut broken = words.clone();
        broken[3] = 2;
        let e = validate("tiny", &broken).unwrap_err().to_string();
        assert!(e.contains("tiny") && e.contains("error"), "{e}");
        // Not SPIR-V at all.
        assert!(validate("tiny", &[0xdead_beef, 0, 0, 0, 0]).is_err());
    }
}
