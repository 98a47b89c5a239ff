//! The tera templates (embedded from the repository's `templates/` directory, so the
//! library works from any `build.rs`) and the per-backend data they are rendered with:
//! the kernel, its [`KernelInfo`], and what the [`Dialect`] spells (its template, its
//! kernel signature).

use crate::analysis::{literal, KernelInfo, F16_SPEC_ID, FMA_SPEC_ID, MIN_RESIDENT_INVOCATIONS};
use crate::dialect::{Cuda, Dialect, Glsl, Msl, SignatureBuffer};
use crate::error::CodegenError;
use crate::print::{ident, scratch_name, shared_name, Printer, ARRIVAL_FLAG, ARRIVAL_FLAG_WORDS, PAIR_INDEX_SCRATCH};
use onekernel_dsl::ir::{Access, Kernel, ParamKind};
use onekernel_dsl::types::{Scalar, StorageType};
use serde::Serialize;
use std::sync::OnceLock;
use tera::{Context, Tera};

const TEMPLATES: &[(&str, &str)] = &[
    ("cuda/kernel.cu.tera", include_str!("../../templates/cuda/kernel.cu.tera")),
    ("cuda/helpers.cuh", include_str!("../../templates/cuda/helpers.cuh")),
    ("cuda/tile.cuh", include_str!("../../templates/cuda/tile.cuh")),
    ("glsl/kernel.comp.tera", include_str!("../../templates/glsl/kernel.comp.tera")),
    ("glsl/helpers.glsl", include_str!("../../templates/glsl/helpers.glsl")),
    ("msl/kernel.metal.tera", include_str!("../../templates/msl/kernel.metal.tera")),
    ("msl/helpers.metal", include_str!("../../templates/msl/helpers.metal")),
    ("msl/tile.metal", include_str!("../../templates/msl/tile.metal")),
];

fn tera() -> Result<&'static Tera, String> {
    static TERA: OnceLock<Result<Tera, String>> = OnceLock::new();
    TERA.get_or_init(|| {
        let mut t = Tera::default();
        t.add_raw_templates(TEMPLATES.iter().copied()).map_err(|e| chain(&e))?;
        t.autoescape_on(vec![]);
        Ok(t)
    })
    .as_ref()
    .map_err(|e| e.clone())
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        s.push_str(": ");
        s.push_str(&x.to_string());
        src = x.source();
    }
    s
}

#[derive(Serialize)]
struct SpecCtx {
    id: u32,
    name: String,
    ty: &'static str,
    default: String,
    /// C++ before C++20 has no float template parameters: CUDA passes f32 spec
    /// constants as their bits and casts them back inside the template.
    is_float: bool,
}

#[derive(Serialize)]
struct BufferCtx {
    binding: u32,
    name: String,
    ty: &'static str,
    read_only: bool,
    /// GLSL: declared `coherent` (a kernel with `last_arrival` reads what other
    /// workgroups wrote).
    coherent: bool,
    /// GLSL: the vector-typed views of this binding that `load_words` reads through
    /// (another block on the same binding, so neither block is `restrict`).
    views: Vec<ViewCtx>,
}

/// A vector-typed view of a storage buffer (GLSL; see [`BufferCtx::views`]).
#[derive(Serialize)]
struct ViewCtx {
    name: String,
    ty: String,
}

#[derive(Serialize)]
struct PushCtx {
    name: String,
    ty: &'static str,
    offset: u32,
}

/// `__launch_bounds__`' second argument for a workgroup of `invocations`.
fn min_resident_workgroups(invocations: u64) -> u64 {
    (MIN_RESIDENT_INVOCATIONS / invocations.max(1)).max(1)
}

/// The kernel's `resident = N`, else the default for its workgroup size.
fn min_blocks(k: &Kernel) -> u64 {
    k.resident.map_or_else(|| min_resident_workgroups(k.workgroup_invocations()), u64::from)
}

/// Renders the source of one backend from the kernel and its analysis.
pub fn render(k: &Kernel, info: &KernelInfo, d: &dyn Dialect) -> Result<String, CodegenError> {
    let mut ctx = Context::new();
    ctx.insert("name", &k.name);
    ctx.insert("class", &format!("{:?}", k.class).to_lowercase());
    ctx.insert("source_file", &k.source.file);
    ctx.insert("source_line", &k.source.line);
    ctx.insert("source_hash", &k.source.hash);
    ctx.insert("doc", &k.doc.lines().collect::<Vec<_>>());
    ctx.insert("workgroup", &k.workgroup);
    ctx.insert("invocations", &k.workgroup_invocations());
    ctx.insert("min_blocks", &min_blocks(k));
    let (buffers, push, specs) = parameters(k, d);
    let buffer_ctx: Vec<BufferCtx> = buffers
        .iter()
        .enumerate()
        .map(|(i, (name, elem, access))| {
            let mut views: Vec<ViewCtx> = info
                .word_views
                .iter()
                .filter(|(p, _)| ident(&k.params[p.0 as usize].name) == *name)
                .map(|&(_, words)| ViewCtx { name: d.word_view(name, words), ty: d.word_vector(elem.value_type(), words) })
                .collect();
            if let Some(ty) = d.halves_type() {
                if info.tile_operand_buffers.iter().any(|p| ident(&k.params[p.0 as usize].name) == *name) {
                    views.push(ViewCtx { name: d.halves_view(name), ty: ty.to_string() });
                }
            }
            let read_only = *access == Access::ReadOnly;
            let coherent = coherent_buffer(k, info, name);
            BufferCtx { binding: i as u32, name: name.clone(), ty: d.storage_type(*elem), read_only, coherent, views }
        })
        .collect();
    ctx.insert("needs_8bit", &buffers.iter().any(|(_, e, _)| e.size_bytes() == 1));
    ctx.insert("needs_16bit", &buffers.iter().any(|(_, e, _)| e.size_bytes() == 2));
    let (shared, dyn_bytes) = shared_declarations(k, info, d);
    ctx.insert("dyn_bytes", &dyn_bytes);
    ctx.insert("shared", &shared);
    ctx.insert("uses_fma", &info.uses_fma);
    ctx.insert("uses_tiles", &info.uses_tiles);
    ctx.insert("fma_spec_id", &FMA_SPEC_ID);
    ctx.insert("f16_spec_id", &F16_SPEC_ID);
    let functions: Vec<String> = k.functions.iter().map(|f| Printer::function(d, k, f)).collect();
    ctx.insert("functions", &functions);
    ctx.insert("body", &Printer::new(d, k, info, 1).body());
    let signature: Vec<SignatureBuffer> = buffers
        .iter()
        .map(|(name, elem, access)| SignatureBuffer { name, elem: *elem, access: *access, coherent: coherent_buffer(k, info, name) })
        .collect();
    let (params, args) = d.kernel_signature(&k.name, &signature, !push.is_empty());
    ctx.insert("params", &params.join(", "));
    ctx.insert("args", &args.join(", "));
    ctx.insert("instances", &info.instances);
    ctx.insert("buffers", &buffer_ctx);
    ctx.insert("push", &push);
    ctx.insert("specs", &specs);
    let (template, backend) = (d.template(), d.backend());
    let err = |message: String| CodegenError::Template { kernel: k.name.clone(), backend, template: template.into(), message };
    let t = tera().map_err(err)?;
    let mut text = t.render(template, &ctx).map_err(|e| err(chain(&e)))?;
    // Only the helpers the file calls (crate::helpers).
    let dialect_dir = template.split('/').next().unwrap_or_default();
    if let Some((_, helpers)) = TEMPLATES.iter().find(|(p, _)| p.starts_with(&format!("{dialect_dir}/helpers"))) {
        text = crate::helpers::prune(&text, helpers);
    }
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// A buffer parameter: identifier, element type, access.
type BufferParam = (String, StorageType, Access);

/// The kernel's buffers (identifier, element type, access), push constants and spec
/// constants as the templates spell them.
fn parameters(k: &Kernel, d: &dyn Dialect) -> (Vec<BufferParam>, Vec<PushCtx>, Vec<SpecCtx>) {
    let (mut buffers, mut push, mut specs) = (Vec::new(), Vec::new(), Vec::new());
    for p in &k.params {
        let name = ident(&p.name);
        match &p.kind {
            ParamKind::Buffer { elem, access, .. } => buffers.push((name, *elem, *access)),
            ParamKind::Push { ty } => push.push(PushCtx { name, ty: d.scalar(*ty), offset: 4 * push.len() as u32 }),
            ParamKind::Spec { ty, default, .. } => specs.push(SpecCtx {
                id: specs.len() as u32,
                name,
                ty: d.scalar(*ty),
                default: default.map(|v| literal(d, v)).unwrap_or_default(),
                is_float: *ty == Scalar::F32,
            }),
        }
    }
    (buffers, push, specs)
}

/// The shared-memory declarations (the kernel's arrays, then the reductions' scratch),
/// and the size per instance of the dynamic region where the dialect keeps some arrays
/// there (CUDA, past its static limit).
fn shared_declarations(k: &Kernel, info: &KernelInfo, d: &dyn Dialect) -> (Vec<String>, Option<String>) {
    let sizes = Printer::new(d, k, info, 0);
    let lens: Vec<String> = k.shared.iter().map(|s| d.shared_len(s.len, s.size.as_ref().map(|e| sizes.expr(e)))).collect();
    let dynamic: &[usize] = if d.has_dynamic_shared() { &info.cuda_dynamic_shared } else { &[] };
    let mut shared: Vec<String> = Vec::new();
    // Arrays past CUDA's static limit live in one dynamic region, each at a 16-byte
    // multiple: `ok_dyn_shared + offset`; the region's size per instance is returned.
    let mut offset = String::from("0u");
    // Panels need 1024-byte alignment: where one is in the dynamic region, the region
    // starts at the first 1024-byte boundary of what the launch passes (1008 bytes more)
    // and the panel's offset is rounded up to 1024.
    let dynamic_panels = dynamic.iter().any(|i| info.panel_shared.contains(i));
    if !dynamic.is_empty() {
        shared.push("extern __shared__ __align__(16) unsigned char ok_dyn_shared[]".into());
        if dynamic_panels {
            shared.push(
                "unsigned char* const ok_dyn = ok_dyn_shared + ((1024u - ((unsigned int)__cvta_generic_to_shared(ok_dyn_shared) & 1023u)) & 1023u)"
                    .into(),
            );
        }
    }
    let region = if dynamic_panels { "ok_dyn" } else { "ok_dyn_shared" };
    for (i, s) in k.shared.iter().enumerate() {
        if dynamic.contains(&i) {
            let ty = d.scalar(s.elem);
            if info.panel_shared.contains(&i) {
                offset = format!("((({offset}) + 1023u) / 1024u) * 1024u");
            }
            shared.push(format!("{ty}* const {} = reinterpret_cast<{ty}*>({region} + ({offset}))", shared_name(&s.name)));
            offset = format!("{offset} + (({} + 3u) / 4u) * 16u", lens[i]);
        } else {
            match d.halves_shared_decl(&shared_name(&s.name), &lens[i]) {
                Some(decl) if info.tile_operand_shared.contains(&i) => shared.push(decl),
                _ if info.panel_shared.contains(&i) => shared.push(d.panel_shared_decl(s.elem, &shared_name(&s.name), &lens[i])),
                _ => shared.push(d.shared_decl(s.elem, &shared_name(&s.name), &lens[i])),
            }
        }
    }
    for &ty in &info.reduction_types {
        shared.push(d.shared_decl(ty, &scratch_name(ty), &k.workgroup_invocations().to_string()));
    }
    if info.pair_reductions {
        shared.push(d.shared_decl(Scalar::U32, PAIR_INDEX_SCRATCH, &k.workgroup_invocations().to_string()));
    }
    if info.arrivals {
        shared.push(d.shared_decl(Scalar::U32, ARRIVAL_FLAG, &ARRIVAL_FLAG_WORDS.to_string()));
    }
    if dynamic_panels {
        offset = format!("{offset} + 1008u");
    }
    (shared, (!dynamic.is_empty()).then_some(offset))
}

/// Whether the buffer printed as `name` is declared coherent ([`KernelInfo::coherent_buffers`]).
fn coherent_buffer(k: &Kernel, info: &KernelInfo, name: &str) -> bool {
    info.coherent_buffers.iter().any(|p| ident(&k.params[p.0 as usize].name) == name)
}

/// CUDA C++ source of a kernel.
pub fn cuda(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &KernelInfo::of(k), &Cuda)
}

/// GLSL source of a kernel.
pub fn glsl(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &KernelInfo::of(k), &Glsl)
}

/// MSL source of a kernel.
pub fn msl(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &KernelInfo::of(k), &Msl)
}

/// Scalar spelled for the manifest.
pub fn scalar_name(s: Scalar) -> &'static str {
    s.name()
}
