//! Specialization of a module on the host: spec constants set to one variant's values,
//! frozen to plain constants and folded, through SPIRV-Tools' optimizer (linked in
//! shaderc's `libshaderc_combined`, as spirv-val is).
//!
//! Only the second SPIR-V checker needs this: naga's SPIR-V front end does not read
//! `OpSpecConstantOp`, so each variant is checked as the module a driver sees after
//! specialization. The checked-in `.spv` keeps its spec constants.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};

/// `spv_binary_t`.
#[repr(C)]
struct Binary {
    code: *mut u32,
    word_count: usize,
}

/// `spv_position_t`.
#[repr(C)]
struct Position {
    line: usize,
    column: usize,
    index: usize,
}

/// `SPV_ENV_VULKAN_1_1` of `spv_target_env`.
const SPV_ENV_VULKAN_1_1: c_int = 18;
/// `SPV_SUCCESS` of `spv_result_t`.
const SPV_SUCCESS: c_int = 0;

type MessageConsumer = extern "C" fn(level: c_int, source: *const c_char, position: *const Position, message: *const c_char);

unsafe extern "C" {
    fn spvOptimizerCreate(env: c_int) -> *mut c_void;
    fn spvOptimizerDestroy(optimizer: *mut c_void);
    fn spvOptimizerSetMessageConsumer(optimizer: *mut c_void, consumer: MessageConsumer);
    fn spvOptimizerRegisterPassFromFlag(optimizer: *mut c_void, flag: *const c_char) -> bool;
    fn spvOptimizerRun(optimizer: *mut c_void, binary: *const u32, word_count: usize, optimized: *mut *mut Binary, options: *const c_void) -> c_int;
    fn spvOptimizerOptionsCreate() -> *mut c_void;
    fn spvOptimizerOptionsDestroy(options: *mut c_void);
    fn spvOptimizerOptionsSetRunValidator(options: *mut c_void, run: bool);
    fn spvBinaryDestroy(binary: *mut Binary);
}

thread_local! {
    /// The optimizer's messages of the current call (its consumer takes no user data).
    static MESSAGES: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

extern "C" fn collect(_level: c_int, _source: *const c_char, _position: *const Position, message: *const c_char) {
    if message.is_null() {
        return;
    }
    // SAFETY: SPIRV-Tools passes a NUL-terminated string valid for the call.
    let text = unsafe { CStr::from_ptr(message) }.to_string_lossy().into_owned();
    MESSAGES.with(|m| m.borrow_mut().push(text));
}

/// One spec constant's value, spelled as SPIRV-Tools' `--set-spec-const-default-value`
/// reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpecValue {
    /// `OpSpecConstantTrue`/`False`.
    Bool(bool),
    /// A 32-bit unsigned integer.
    U32(u32),
    /// A 32-bit signed integer.
    I32(i32),
    /// A 32-bit float, by bits.
    F32(u32),
}

impl SpecValue {
    fn text(self) -> String {
        match self {
            SpecValue::Bool(b) => b.to_string(),
            SpecValue::U32(v) => v.to_string(),
            SpecValue::I32(v) => v.to_string(),
            // The shortest decimal that rounds back to the same f32 (Rust's `Debug`).
            SpecValue::F32(bits) => format!("{:?}", f32::from_bits(bits)),
        }
    }
}

/// The passes: set the values, freeze every spec constant, fold the `OpSpecConstantOp`
/// and composites built from them, then drop what the folded constants make
/// unreachable, as a driver does at pipeline creation.
const PASSES: &[&str] =
    &["--freeze-spec-const", "--fold-spec-const-op-composite", "--eliminate-dead-branches", "--eliminate-dead-functions", "--eliminate-dead-const"];

/// Returns `words` specialized with `values` (`(spec id, value)`); ids not listed keep
/// their defaults, which the freeze makes constant too.
pub fn specialize(words: &[u32], values: &[(u32, SpecValue)]) -> Result<Vec<u32>, String> {
    let mut flags = Vec::new();
    if !values.is_empty() {
        let list: Vec<String> = values.iter().map(|(id, v)| format!("{id}:{}", v.text())).collect();
        flags.push(format!("--set-spec-const-default-value={}", list.join(" ")));
    }
    flags.extend(PASSES.iter().map(|s| s.to_string()));
    let flags: Vec<CString> = flags.into_iter().map(|f| CString::new(f).expect("pass flags hold no NUL")).collect();
    MESSAGES.with(|m| m.borrow_mut().clear());
    let messages = || MESSAGES.with(|m| m.borrow().join("; "));
    // SAFETY: optimizer and options are created, used and destroyed here; every flag
    // string outlives its registration call; `words` outlives the run and its length is
    // passed with it; the result binary, when made, is copied out and destroyed once.
    unsafe {
        let optimizer = spvOptimizerCreate(SPV_ENV_VULKAN_1_1);
        if optimizer.is_null() {
            return Err("SPIRV-Tools could not create an optimizer".into());
        }
        spvOptimizerSetMessageConsumer(optimizer, collect);
        for flag in &flags {
            if !spvOptimizerRegisterPassFromFlag(optimizer, flag.as_ptr()) {
                spvOptimizerDestroy(optimizer);
                return Err(format!("SPIRV-Tools does not know the pass `{}`: {}", flag.to_string_lossy(), messages()));
            }
        }
        let options = spvOptimizerOptionsCreate();
        spvOptimizerOptionsSetRunValidator(options, false);
        let mut out: *mut Binary = std::ptr::null_mut();
        let result = spvOptimizerRun(optimizer, words.as_ptr(), words.len(), &mut out, options);
        spvOptimizerOptionsDestroy(options);
        spvOptimizerDestroy(optimizer);
        if result != SPV_SUCCESS || out.is_null() || (*out).code.is_null() {
            if !out.is_null() {
                spvBinaryDestroy(out);
            }
            return Err(format!("specialization failed (error {result}): {}", messages()));
        }
        let specialized = std::slice::from_raw_parts((*out).code, (*out).word_count).to_vec();
        spvBinaryDestroy(out);
        Ok(specialized)
    }
}

#[cfg(test)]
mod tests {
    use super::{specialize, SpecValue};

    const GLSL: &str = "#version 450\nlayout(local_size_x = 1) in;\nlayout(constant_id = 0) const uint N = 4u;\n\
        layout(constant_id = 1) const bool TWICE = false;\nconst uint M = N * 3u;\n\
        layout(set = 0, binding = 0) buffer B { uint x[]; } b;\nvoid main() { b.x[0] = TWICE ? 2u * M : M; }\n";

    /// Opcodes of a module's instructions (word 5 on).
    fn opcodes(words: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        let mut i = 5;
        while i < words.len() {
            out.push(words[i] & 0xffff);
            i += (words[i] >> 16).max(1) as usize;
        }
        out
    }

    #[test]
    fn spec_constants_become_constants_with_the_given_values() {
        let words = super::super::compile("spec", GLSL).unwrap();
        const OP_SPEC_CONSTANT: u32 = 50;
        const OP_SPEC_CONSTANT_OP: u32 = 52;
        const OP_CONSTANT: u32 = 43;
        assert!(opcodes(&words).contains(&OP_SPEC_CONSTANT_OP));
        let s = specialize(&words, &[(0, SpecValue::U32(7)), (1, SpecValue::Bool(true))]).unwrap();
        let ops = opcodes(&s);
        assert!(!ops.contains(&OP_SPEC_CONSTANT) && !ops.contains(&OP_SPEC_CONSTANT_OP), "{ops:?}");
        // TWICE ? 2·(7·3) : 7·3 folds to the plain constant 42; the defaults would give 12.
        let constants: Vec<u32> = (5..s.len()).filter(|&i| s[i] & 0xffff == OP_CONSTANT && s[i] >> 16 == 4).map(|i| s[i + 3]).collect();
        assert!(constants.contains(&42), "{constants:?}");
        assert!(!constants.contains(&12) && !constants.contains(&24), "{constants:?}");
        super::super::validate("spec", &s).unwrap();
    }

    #[test]
    fn a_broken_module_is_an_error_not_a_crash() {
        assert!(specialize(&[0xdead_beef, 0, 0, 0, 0], &[]).is_err());
    }
}
