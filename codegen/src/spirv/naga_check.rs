//! naga as a second SPIR-V checker: an independent front end (naga's SPIR-V reader) and
//! validator (types, expressions, control-flow uniformity, layouts) over each specialized
//! module, beside spirv-val.
//!
//! naga reads a subset of SPIR-V. A module that uses what its reader does not support
//! (8-bit storage, cooperative matrices, some GLSL.std.450 instructions) is *not
//! checkable*, reported with naga's reason and never counted as checked; every other
//! parse failure and every validation error is a finding that fails generation.

use naga::front::spv::{self, Error as SpvError};
use naga::valid::{Capabilities, ShaderStages, SubgroupOperationSet, ValidationFlags, Validator};

/// naga's verdict on one module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NagaVerdict {
    /// Parsed and validated without error.
    Valid,
    /// naga's SPIR-V reader does not support something the module uses; the reason is
    /// naga's own error, e.g. `UnsupportedCapability(StorageBuffer8BitAccess)`.
    NotCheckable(String),
}

/// Whether a front-end error is a gap in naga's SPIR-V support rather than a fault of
/// the module.
fn is_coverage_gap(e: &SpvError) -> bool {
    matches!(
        e,
        SpvError::UnsupportedInstruction(..)
            | SpvError::UnsupportedCapability(_)
            | SpvError::UnsupportedExtension(_)
            | SpvError::UnsupportedExtSet(_)
            | SpvError::UnsupportedExtInstSet(_)
            | SpvError::UnsupportedExtInst(_)
            | SpvError::UnsupportedType(_)
            | SpvError::UnsupportedStorageClass(_)
            | SpvError::UnsupportedBuiltIn(_)
            | SpvError::UnsupportedBinaryOperator(_)
            | SpvError::UnsupportedGroupOperation(_)
    )
}

/// Parses and validates one (specialized) module. `Err` is a finding: naga's message.
pub fn check(words: &[u32]) -> Result<NagaVerdict, String> {
    let options = spv::Options { adjust_coordinate_space: false, strict_capabilities: true, block_ctx_dump_prefix: None };
    let bytes = super::to_bytes(words);
    let module = match spv::parse_u8_slice(&bytes, &options) {
        Ok(m) => m,
        Err(e) if is_coverage_gap(&e) => return Ok(NagaVerdict::NotCheckable(format!("{e:?}"))),
        Err(e) => return Err(format!("naga's SPIR-V reader: {e} ({e:?})")),
    };
    // Vulkan lets several declarations share one descriptor; the generator declares
    // read-only vector views (`uvec4`) beside a buffer's scalar view for wide loads. naga
    // follows WGSL, where a binding has one declaration, so its binding-collision check
    // is turned off for exactly those modules, after checking that every shared binding
    // is read-only in all its declarations (a writable alias would be a real hazard).
    let flags = match read_only_aliases(&module)? {
        true => ValidationFlags::all() - ValidationFlags::BINDINGS,
        false => ValidationFlags::all(),
    };
    // Every capability: the device's features are the runtime's to check (the manifest
    // records them); naga checks the module's own consistency.
    let mut validator = Validator::new(flags, Capabilities::all());
    validator.subgroup_stages(ShaderStages::COMPUTE).subgroup_operations(SubgroupOperationSet::all());
    match validator.validate(&module) {
        Ok(_) => Ok(NagaVerdict::Valid),
        Err(e) => Err(format!("naga's validator: {}", e.emit_to_string(""))),
    }
}

/// Whether the module declares a binding more than once; `Err` where a shared binding
/// is writable in any of its declarations.
fn read_only_aliases(module: &naga::Module) -> Result<bool, String> {
    let mut seen: std::collections::BTreeMap<(u32, u32), Vec<(String, bool)>> = Default::default();
    for (_, var) in module.global_variables.iter() {
        if let Some(b) = &var.binding {
            let writable = match var.space {
                naga::AddressSpace::Storage { access } => access.contains(naga::StorageAccess::STORE),
                _ => true,
            };
            seen.entry((b.group, b.binding)).or_default().push((var.name.clone().unwrap_or_default(), writable));
        }
    }
    let mut aliased = false;
    for ((group, binding), vars) in seen.into_iter().filter(|(_, v)| v.len() > 1) {
        if let Some((name, _)) = vars.iter().find(|(_, w)| *w) {
            return Err(format!("binding (set {group}, binding {binding}) is declared {} times and `{name}` writes it", vars.len()));
        }
        aliased = true;
    }
    Ok(aliased)
}

#[cfg(test)]
mod tests {
    use super::{check, NagaVerdict};

    #[test]
    fn a_plain_module_is_valid_and_a_malformed_one_is_a_finding() {
        let glsl =
            "#version 450\nlayout(local_size_x = 1) in;\nlayout(set = 0, binding = 0) buffer B { uint x[]; } b;\nvoid main() { b.x[0] = 1u; }\n";
        let words = super::super::compile("tiny", glsl).unwrap();
        assert_eq!(check(&words), Ok(NagaVerdict::Valid));
        // A header whose magic number is wrong is not a coverage gap.
        let mut broken = words.clone();
        broken[0] = 0xdead_beef;
        assert!(check(&broken).is_err());
        // Cut in the middle of an instruction.
        assert!(check(&words[..words.len() - 1]).is_err());
    }

    #[test]
    fn read_only_views_of_one_binding_are_valid_and_a_writable_alias_is_a_finding() {
        let views = "#version 450\nlayout(local_size_x = 1) in;\n\
            layout(set = 0, binding = 0) readonly buffer A { uint x[]; } a;\n\
            layout(set = 0, binding = 0) readonly buffer A4 { uvec4 x[]; } a4;\n\
            layout(set = 0, binding = 1) buffer O { uint x[]; } o;\n\
            void main() { o.x[0] = a.x[1] + a4.x[1].y; }\n";
        let words = super::super::compile("views", views).unwrap();
        assert_eq!(check(&words), Ok(NagaVerdict::Valid));
        let writable = views
            .replace("layout(set = 0, binding = 0) readonly buffer A4", "layout(set = 0, binding = 0) buffer A4")
            .replace("o.x[0] = a.x[1] + a4.x[1].y;", "o.x[0] = a.x[1]; a4.x[0].y = 3u;");
        let words = super::super::compile("alias", &writable).unwrap();
        let e = check(&words).unwrap_err();
        assert!(e.contains("binding 0") && e.contains("writes"), "{e}");
    }

    #[test]
    fn eight_bit_storage_is_reported_as_not_checkable() {
        let glsl = "#version 450\n#extension GL_EXT_shader_8bit_storage : require\nlayout(local_size_x = 1) in;\n\
            layout(set = 0, binding = 0) buffer B { uint8_t x[]; } b;\nvoid main() { b.x[0] = uint8_t(1); }\n";
        let words = super::super::compile("bytes", glsl).unwrap();
        match check(&words) {
            Ok(NagaVerdict::NotCheckable(reason)) => assert!(reason.contains("8Bit") || reason.contains("Int8"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }
}
