//! Building `generated/manifest.json` entries. The schema itself lives in
//! `onekernel_dsl::manifest` (shared with the runtime, which reads it); kernels are
//! sorted by name, so the file is byte-identical across runs.

use crate::analysis::Instance;
use onekernel_dsl::ir::{Kernel, ParamKind};
use onekernel_dsl::types::Literal;

pub use onekernel_dsl::manifest::*;

/// NVRTC options every CUDA kernel is compiled with.
pub const CUDA_OPTIONS: &[&str] = &["--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true", "-std=c++17"];

/// Interface entries shared by every backend.
pub fn interface(k: &Kernel) -> (Vec<BufferEntry>, Vec<PushEntry>, Vec<SpecEntry>) {
    let (mut buffers, mut push, mut specs) = (Vec::new(), Vec::new(), Vec::new());
    for p in &k.params {
        // DSL names: what callers bind arguments by. Generated code may spell reserved
        // names with a trailing `_`; that is internal to each backend's source.
        let name = p.name.clone();
        match &p.kind {
            ParamKind::Buffer { elem, access, len } => buffers.push(BufferEntry {
                name,
                binding: buffers.len() as u32,
                elem: *elem,
                access: *access,
                len_text: len.as_ref().map(|e| onekernel_dsl::shapes::text(e, &|p| k.params[p.0 as usize].name.clone())),
                len: len.clone(),
            }),
            ParamKind::Push { ty } => push.push(PushEntry { name, ty: *ty, offset: 4 * push.len() as u32 }),
            ParamKind::Spec { ty, default, values } => {
                specs.push(SpecEntry { id: specs.len() as u32, name, ty: *ty, default: default.unwrap_or(Literal::U32(0)), values: values.clone() })
            }
        }
    }
    (buffers, push, specs)
}

/// The variants of a kernel (one per combination of variant-axis values), each with its
/// shared memory in bytes.
pub fn variants(instances: &[Instance], k: &Kernel, scratch_bytes: u32) -> Vec<VariantEntry> {
    // Shared memory of the variant with spec values `values` (arrays sized by axes).
    let shared = |values: &[(String, Literal)]| -> u32 {
        let param = |p: onekernel_dsl::ir::ParamId| {
            let name = &k.params.get(p.0 as usize)?.name;
            values.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
        };
        k.shared.iter().map(|s| 4 * s.len_for(&param)).sum::<u32>() + scratch_bytes
    };
    if instances.is_empty() {
        return vec![VariantEntry { label: "defaults".into(), spec: vec![], cuda_entry: k.name.clone(), shared_bytes: shared(&[]) }];
    }
    instances
        .iter()
        .map(|i| VariantEntry { label: i.label.clone(), spec: i.values.clone(), cuda_entry: i.entry.clone(), shared_bytes: shared(&i.values) })
        .collect()
}
