//! Consistency of a manifest read from disk: every field a launch relies on is checked
//! before anything runs, so a hand-edited, truncated or hostile `manifest.json` is an
//! error naming the kernel and the field, never a panic, an out-of-range index or an
//! allocation sized by a number in the file.

use super::{Artifact, KernelManifest, Manifest, SCHEMA_VERSION};
use crate::ir::{Expr, ExprKind};
use crate::types::{Literal, Scalar};
use crate::validate::{is_identifier, MAX_PUSH_BYTES, MAX_WORKGROUP_INVOCATIONS, SHARED_LIMIT_BYTES};

/// A manifest field that is inconsistent or out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("manifest: {}{field}: {message}", kernel.as_ref().map(|k| format!("kernel `{k}`, ")).unwrap_or_default())]
pub struct ManifestError {
    /// The kernel, where the field belongs to one.
    pub kernel: Option<String>,
    /// The field, as a path (`buffers[2].binding`).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

/// Deepest length expression accepted (the generator's are a few levels deep).
const MAX_LEN_DEPTH: u32 = 32;

fn literal_type(v: &Literal) -> Scalar {
    v.ty()
}

impl Manifest {
    /// Checks the schema version and every kernel (see [`KernelManifest::check`]), and
    /// that kernel names are unique.
    pub fn check(&self) -> Result<(), ManifestError> {
        let top = |field: &str, message: String| ManifestError { kernel: None, field: field.into(), message };
        if self.schema != SCHEMA_VERSION {
            return Err(top("schema", format!("version {} is not the version {SCHEMA_VERSION} this build reads", self.schema)));
        }
        let mut names = std::collections::BTreeSet::new();
        for (i, k) in self.kernels.iter().enumerate() {
            if !names.insert(k.name.as_str()) {
                return Err(top(&format!("kernels[{i}].name"), format!("`{}` appears twice", k.name)));
            }
            k.check()?;
        }
        Ok(())
    }
}

impl KernelManifest {
    /// Checks the kernel's entry: names are identifiers, bindings and push offsets are
    /// dense and in order, spec ids are unique, every variant gives each spec constant a
    /// value of its type (and a variant axis one of its values), sizes are within the
    /// DSL's limits, length expressions use only push and spec parameters, and every
    /// artifact path stays inside the generated directory.
    pub fn check(&self) -> Result<(), ManifestError> {
        let err = |field: String, message: String| ManifestError { kernel: Some(self.name.clone()), field, message };
        if !is_identifier(&self.name) {
            return Err(ManifestError { kernel: None, field: "kernels[].name".into(), message: format!("{:?} is not an identifier", self.name) });
        }
        let invocations = self.workgroup.iter().fold(1u64, |acc, &w| acc.saturating_mul(w as u64));
        if self.workgroup.contains(&0) || invocations > MAX_WORKGROUP_INVOCATIONS {
            return Err(err("workgroup".into(), format!("{:?}: each size ≥ 1 and their product ≤ {MAX_WORKGROUP_INVOCATIONS}", self.workgroup)));
        }
        for (i, n) in self.param_names.iter().enumerate() {
            if !is_identifier(n) {
                return Err(err(format!("param_names[{i}]"), format!("{n:?} is not an identifier")));
            }
        }
        let n_params = self.buffers.len() + self.push_constants.len() + self.spec_constants.len();
        if self.param_names.len() != n_params {
            return Err(err("param_names".into(), format!("{} names for {n_params} parameters", self.param_names.len())));
        }
        let is_param = |n: &str| self.param_names.iter().any(|p| p == n);
        for (i, b) in self.buffers.iter().enumerate() {
            if b.binding != i as u32 {
                return Err(err(format!("buffers[{i}].binding"), format!("{} where {i} is expected (bindings are dense and in order)", b.binding)));
            }
            if !is_param(&b.name) {
                return Err(err(format!("buffers[{i}].name"), format!("`{}` is not in param_names", b.name)));
            }
            if let Some(len) = &b.len {
                self.check_len(len, 0).map_err(|m| err(format!("buffers[{i}].len"), m))?;
            }
        }
        for (i, p) in self.push_constants.iter().enumerate() {
            if p.offset != 4 * i as u32 {
                return Err(err(format!("push_constants[{i}].offset"), format!("{} where {} is expected", p.offset, 4 * i)));
            }
            if !is_param(&p.name) {
                return Err(err(format!("push_constants[{i}].name"), format!("`{}` is not in param_names", p.name)));
            }
        }
        if self.push_constant_bytes != 4 * self.push_constants.len() as u32 || self.push_constant_bytes > MAX_PUSH_BYTES {
            return Err(err(
                "push_constant_bytes".into(),
                format!("{} for {} push constants (4 bytes each, ≤ {MAX_PUSH_BYTES})", self.push_constant_bytes, self.push_constants.len()),
            ));
        }
        for (i, s) in self.spec_constants.iter().enumerate() {
            let field = |f: &str| format!("spec_constants[{i}].{f}");
            if s.id != i as u32 {
                return Err(err(field("id"), format!("{} where {i} is expected", s.id)));
            }
            if !is_param(&s.name) {
                return Err(err(field("name"), format!("`{}` is not in param_names", s.name)));
            }
            if literal_type(&s.default) != s.ty {
                return Err(err(field("default"), format!("{} is not a {}", s.default, s.ty)));
            }
            for (j, v) in s.values.iter().flatten().enumerate() {
                if literal_type(v) != s.ty {
                    return Err(err(format!("spec_constants[{i}].values[{j}]"), format!("{v} is not a {}", s.ty)));
                }
            }
        }
        let user_ids = self.spec_constants.len() as u32;
        for (f, id) in [("vulkan.fma_spec_id", self.vulkan.fma_spec_id), ("vulkan.f16_spec_id", self.vulkan.f16_spec_id)] {
            if id.is_some_and(|id| id < user_ids) {
                return Err(err(f.into(), format!("{id:?} collides with a spec constant's id")));
            }
        }
        if self.variants.is_empty() {
            return Err(err("variants".into(), "no variant (every kernel has at least `defaults`)".into()));
        }
        let mut labels = std::collections::BTreeSet::new();
        for (i, v) in self.variants.iter().enumerate() {
            let field = |f: String| format!("variants[{i}].{f}");
            if !labels.insert(v.label.as_str()) {
                return Err(err(field("label".into()), format!("`{}` appears twice", v.label)));
            }
            if !is_identifier(&v.cuda_entry) {
                return Err(err(field("cuda_entry".into()), format!("{:?} is not an identifier", v.cuda_entry)));
            }
            if v.shared_bytes > SHARED_LIMIT_BYTES {
                return Err(err(field("shared_bytes".into()), format!("{} bytes, over the {SHARED_LIMIT_BYTES}-byte limit", v.shared_bytes)));
            }
            for (j, (name, value)) in v.spec.iter().enumerate() {
                let Some(s) = self.spec_constants.iter().find(|s| &s.name == name) else {
                    return Err(err(field(format!("spec[{j}]")), format!("`{name}` is not a spec constant")));
                };
                if literal_type(value) != s.ty {
                    return Err(err(field(format!("spec[{j}]")), format!("`{name}` = {value} is not a {}", s.ty)));
                }
                if s.values.as_ref().is_some_and(|vals| !vals.contains(value)) {
                    return Err(err(field(format!("spec[{j}]")), format!("`{name}` = {value} is not one of the axis' values")));
                }
            }
        }
        if self.shared_bytes > SHARED_LIMIT_BYTES {
            return Err(err("shared_bytes".into(), format!("{} bytes, over the {SHARED_LIMIT_BYTES}-byte limit", self.shared_bytes)));
        }
        // The generator writes one tile shape; a runtime checks its devices for that one.
        if let Some(t) = &self.tiles {
            let want = super::TileFeatures::standard();
            if *t != want || invocations % u64::from(want.group) != 0 {
                let message = format!(
                    "{t:?} with {invocations} invocations: this build runs {:?} tiles held by groups of {} (workgroups of whole groups)",
                    want.shape, want.group
                );
                return Err(err("tiles".into(), message));
            }
        }
        for (f, a) in self.artifacts() {
            check_artifact(a).map_err(|m| err(f.into(), m))?;
        }
        Ok(())
    }

    /// Every generated file of the kernel, with its field name.
    pub fn artifacts(&self) -> [(&'static str, &Artifact); 4] {
        [
            ("cuda.source", &self.cuda.source),
            ("vulkan.glsl", &self.vulkan.glsl),
            ("vulkan.spirv", &self.vulkan.spirv),
            ("metal.source", &self.metal.source),
        ]
    }

    /// A length expression: bounded depth, only parameters that are push or spec
    /// constants.
    fn check_len(&self, e: &Expr, depth: u32) -> Result<(), String> {
        if depth > MAX_LEN_DEPTH {
            return Err(format!("nested deeper than {MAX_LEN_DEPTH}"));
        }
        crate::shapes::check(e)?;
        let sub = |x: &Expr| self.check_len(x, depth + 1);
        match &e.kind {
            ExprKind::Param(p) => {
                let i = p.0 as usize;
                let name = self.param_names.get(i).ok_or_else(|| format!("parameter {i} does not exist"))?;
                if self.buffers.iter().any(|b| &b.name == name) {
                    return Err(format!("parameter {i} (`{name}`) is a buffer, not a number"));
                }
                Ok(())
            }
            ExprKind::Binary(_, a, b) => sub(a).and(sub(b)),
            ExprKind::Unary(_, a) | ExprKind::Cast(a) => sub(a),
            ExprKind::Select(c, a, b) => sub(c).and(sub(a)).and(sub(b)),
            ExprKind::Intrinsic(_, args) => args.iter().try_for_each(sub),
            ExprKind::Builtin { axis, .. } if *axis > 2 => Err(format!("axis {axis} (0, 1 or 2)")),
            _ => Ok(()),
        }
    }
}

/// A path relative to the generated directory that stays inside it, and a SHA-256.
fn check_artifact(a: &Artifact) -> Result<(), String> {
    let p = std::path::Path::new(&a.path);
    let inside =
        !a.path.is_empty() && p.is_relative() && p.components().all(|c| matches!(c, std::path::Component::Normal(_))) && !a.path.contains('\\');
    if !inside {
        return Err(format!("path {:?} leaves the generated directory", a.path));
    }
    if a.sha256.len() != 64 || !a.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("sha256 {:?} is not 64 hex digits", a.sha256));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::manifest::Manifest;

    /// The checked-in manifest passes; the generated directory is two levels up.
    fn checked_in() -> Manifest {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/manifest.json");
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn the_checked_in_manifest_is_consistent() {
        checked_in().check().unwrap();
    }

    #[test]
    fn each_inconsistency_names_its_kernel_and_field() {
        type Edit = fn(&mut Manifest);
        let cases: &[(&str, Edit)] = &[
            ("schema", |m| m.schema = 99),
            ("kernels[1].name", |m| m.kernels[1].name = m.kernels[0].name.clone()),
            ("kernels[].name", |m| m.kernels[0].name = "../x".into()),
            ("workgroup", |m| m.kernels[0].workgroup = [0, 1, 1]),
            ("workgroup", |m| m.kernels[0].workgroup = [u32::MAX, u32::MAX, 2]),
            ("buffers[0].binding", |m| m.kernels[0].buffers[0].binding = 7),
            ("buffers[0].name", |m| m.kernels[0].buffers[0].name = "nope".into()),
            ("param_names", |m| {
                m.kernels[0].param_names.pop();
            }),
            ("push_constants[0].offset", |m| m.kernels[0].push_constants[0].offset = 4),
            ("push_constant_bytes", |m| m.kernels[0].push_constant_bytes = 4096),
            ("variants", |m| m.kernels[0].variants.clear()),
            ("variants[0].shared_bytes", |m| m.kernels[0].variants[0].shared_bytes = u32::MAX),
            ("shared_bytes", |m| m.kernels[0].shared_bytes = 1 << 30),
            ("variants[0].cuda_entry", |m| m.kernels[0].variants[0].cuda_entry = "x; y".into()),
            ("cuda.source", |m| m.kernels[0].cuda.source.path = "/etc/passwd".into()),
            ("vulkan.spirv", |m| m.kernels[0].vulkan.spirv.path = "vulkan/../../x.spv".into()),
            ("metal.source", |m| m.kernels[0].metal.source.sha256 = "zz".into()),
            ("tiles", |m| m.kernels[0].tiles = Some(crate::manifest::TileFeatures { shape: [8, 8, 8], ..crate::manifest::TileFeatures::standard() })),
            ("tiles", |m| {
                m.kernels[0].tiles = Some(crate::manifest::TileFeatures::standard());
                m.kernels[0].workgroup = [48, 1, 1];
            }),
        ];
        for (field, edit) in cases {
            let mut m = checked_in();
            edit(&mut m);
            let e = m.check().unwrap_err();
            assert!(e.field.contains(field), "expected field `{field}`, got: {e}");
            assert!(e.to_string().starts_with("manifest: "), "{e}");
        }
    }

    #[test]
    fn variant_values_and_length_expressions_are_checked() {
        use crate::ir::{Expr, ExprKind, ParamId};
        use crate::types::{Literal, Scalar};
        let mut m = checked_in();
        let k = m.kernels.iter_mut().find(|k| k.spec_constants.iter().any(|s| s.values.is_some())).unwrap();
        let name = k.variants[0].spec[0].0.clone();
        k.variants[0].spec[0].1 = Literal::F32(1.5f32.to_bits());
        let e = m.check().unwrap_err();
        assert!(e.field.ends_with("spec[0]") && e.message.contains(&name), "{e}");

        let mut m = checked_in();
        let k = m.kernels.iter_mut().find(|k| k.buffers.iter().any(|b| b.len.is_some())).unwrap();
        let b = k.buffers.iter_mut().find(|b| b.len.is_some()).unwrap();
        b.len = Some(Expr { kind: ExprKind::Param(ParamId(999)), ty: Scalar::U32, span: crate::ir::SpanId(0) });
        let e = m.check().unwrap_err();
        assert!(e.field.ends_with(".len") && e.message.contains("999"), "{e}");
        // A buffer used as a number.
        let mut m = checked_in();
        let k = m.kernels.iter_mut().find(|k| k.buffers.iter().any(|b| b.len.is_some())).unwrap();
        k.buffers.iter_mut().find(|b| b.len.is_some()).unwrap().len =
            Some(Expr { kind: ExprKind::Param(ParamId(0)), ty: Scalar::U32, span: crate::ir::SpanId(0) });
        assert!(m.check().unwrap_err().message.contains("is a buffer"));
    }
}
