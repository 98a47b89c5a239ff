//! The tera templates (embedded from the repository's `templates/` directory, so the
//! library works from any `build.rs`) and the per-backend data they are rendered with.

use crate::dialect::{Cuda, Dialect, Glsl, Msl};
use crate::error::CodegenError;
use crate::print::{ident, reduction_types, scratch_name, shared_name, Printer};
use onekernel_dsl::ir::{Access, Kernel, ParamKind};
use onekernel_dsl::types::{Literal, Scalar};
use serde::Serialize;
use std::sync::OnceLock;
use tera::{Context, Tera};

const TEMPLATES: &[(&str, &str)] = &[
    ("cuda/kernel.cu.tera", include_str!("../../templates/cuda/kernel.cu.tera")),
    ("cuda/helpers.cuh", include_str!("../../templates/cuda/helpers.cuh")),
    ("cuda/mma.cuh", include_str!("../../templates/cuda/mma.cuh")),
    ("glsl/kernel.comp.tera", include_str!("../../templates/glsl/kernel.comp.tera")),
    ("glsl/helpers.glsl", include_str!("../../templates/glsl/helpers.glsl")),
    ("msl/kernel.metal.tera", include_str!("../../templates/msl/kernel.metal.tera")),
    ("msl/helpers.metal", include_str!("../../templates/msl/helpers.metal")),
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

/// One CUDA entry point: an explicit instantiation of the kernel template.
#[derive(Serialize, Clone, Debug, PartialEq)]
pub struct Instance {
    /// `extern "C"` entry name.
    pub entry: String,
    /// Template arguments, in spec-constant order.
    pub args: String,
    /// `axis = value, …` for the comment.
    pub label: String,
    /// The spec values of this instance, in spec-constant order.
    pub values: Vec<(String, Literal)>,
}

/// Literal text of a spec value in a dialect.
fn literal(d: &dyn Dialect, l: Literal) -> String {
    match l {
        Literal::F32(b) => d.float_literal(b),
        Literal::U32(v) => d.uint_literal(v),
        Literal::I32(v) => d.int_literal(v),
        Literal::Bool(b) => b.to_string(),
    }
}

/// Every combination of variant-axis values (free spec constants at their default),
/// in axis order, the first axis varying slowest.
pub fn instances(k: &Kernel) -> Vec<Instance> {
    let specs: Vec<_> = k.params.iter().filter(|p| matches!(p.kind, ParamKind::Spec { .. })).collect();
    if specs.is_empty() {
        return vec![];
    }
    let mut combos: Vec<Vec<(String, Literal, bool)>> = vec![vec![]];
    for p in &specs {
        let ParamKind::Spec { default, values, .. } = &p.kind else { continue };
        let (vals, axis) = match values {
            Some(v) => (v.clone(), true),
            None => (default.iter().copied().collect(), false),
        };
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((p.name.clone(), *v, axis));
                    c
                })
            })
            .collect();
    }
    combos
        .into_iter()
        .map(|c| {
            let mut entry = k.name.clone();
            let mut label = Vec::new();
            for (name, v, axis) in &c {
                if *axis {
                    let text = match v {
                        Literal::Bool(b) => b.to_string(),
                        Literal::U32(x) => x.to_string(),
                        Literal::I32(x) if *x < 0 => format!("m{}", x.unsigned_abs()),
                        Literal::I32(x) => x.to_string(),
                        Literal::F32(b) => format!("{b:08x}"),
                    };
                    entry.push_str(&format!("__{name}_{text}"));
                    label.push(format!("{name} = {v}"));
                }
            }
            let args = c
                .iter()
                .map(|(_, v, _)| match v {
                    Literal::F32(bits) => format!("0x{bits:08x}u"),
                    other => literal(&Cuda, *other),
                })
                .collect::<Vec<_>>()
                .join(", ");
            let label = if label.is_empty() { "defaults".to_string() } else { label.join(", ") };
            Instance { entry, args, label, values: c.into_iter().map(|(n, v, _)| (n, v)).collect() }
        })
        .collect()
}

/// Vulkan `constant_id` of the `ok_native_fma` switch (see `docs/CODEGEN.md`), far
/// above the kernel's own spec ids.
pub const FMA_SPEC_ID: u32 = 1000;

/// Vulkan `constant_id` of the `ok_f16_unpack_exact` switch (see `docs/CODEGEN.md`),
/// declared by every module.
pub const F16_SPEC_ID: u32 = 1001;

/// Whether a kernel (or a library function it carries) uses `fma`.
pub fn uses_fma(k: &Kernel) -> bool {
    use onekernel_dsl::ir::{ExprKind, Intrinsic};
    use onekernel_dsl::visit::{stmt_exprs, walk_expr, walk_stmts};
    let mut found = false;
    let mut check = |e: &onekernel_dsl::ir::Expr| walk_expr(e, &mut |x| found |= matches!(x.kind, ExprKind::Intrinsic(Intrinsic::Fma, _)));
    let mut stmts = Vec::new();
    walk_stmts(&k.body, &mut |s| stmts.push(s));
    for f in &k.functions {
        walk_stmts(&f.body, &mut |s| stmts.push(s));
        check(&f.result);
    }
    for s in stmts {
        for e in stmt_exprs(s) {
            check(e);
        }
    }
    found
}

/// Whether a kernel has an `mma_f16` statement: GLSL then enables cooperative matrices
/// and declares the groups' scratch tiles (`ok_mma_c`).
pub fn uses_mma(k: &Kernel) -> bool {
    let mut found = false;
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| found |= matches!(s.kind, onekernel_dsl::ir::StmtKind::Mma(_)));
    found
}

/// 32-bit words of GLSL's `mma_f16` scratch per group of 32 invocations: the 16 × 8 f32
/// product tile (`ok_mma_c`) and the 16 × 8 f16 B tile of one k step (`ok_mma_b`).
pub const MMA_SCRATCH_WORDS: (u32, u32) = (128, 64);

/// The words of each GLSL `mma_f16` scratch array of a kernel (`ok_mma_c`, `ok_mma_b`),
/// zero where it has no `mma_f16`.
pub fn mma_scratch_words(k: &Kernel) -> (u32, u32) {
    let groups = if uses_mma(k) { k.workgroup_invocations() as u32 / 32 } else { 0 };
    (MMA_SCRATCH_WORDS.0 * groups, MMA_SCRATCH_WORDS.1 * groups)
}

/// The (buffer, element count) pairs that a kernel's `load_words` statements read, in
/// parameter order: GLSL declares a vector-typed view of each.
pub fn word_views(k: &Kernel) -> std::collections::BTreeSet<(onekernel_dsl::ir::ParamId, u32)> {
    use onekernel_dsl::ir::StmtKind;
    let mut views = std::collections::BTreeSet::new();
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| {
        if let StmtKind::LoadWords { src: onekernel_dsl::ir::Place::Buffer(src), words, .. } = &s.kind {
            views.insert((*src, *words));
        }
    });
    views
}

/// Invocations every CUDA kernel asks to keep resident per SM.
///
/// The hot kernels are bandwidth-bound: latency is hidden by invocations in flight, so
/// the register allocator is told to leave room for 512 of them (≤ 128 registers each)
/// rather than spend registers on instruction-level parallelism. Measured on the H200:
/// the decode chunk kernel at 213 registers (2 workgroups per SM) ran 35 % slower than at
/// 128 (docs/PERFORMANCE.md).
pub const MIN_RESIDENT_INVOCATIONS: u64 = 512;

/// Bytes of static shared memory a CUDA kernel may declare.
pub const CUDA_STATIC_SHARED_BYTES: u64 = 48 * 1024;

/// The shared arrays (indices into `k.shared`) that CUDA code keeps in dynamic shared
/// memory: the largest first, until the rest (and the reductions' scratch) fit CUDA's
/// static limit. Empty for kernels within it, whose code is unchanged. The others stay
/// separate static arrays, so the compiler still knows they do not alias.
pub fn cuda_dynamic_shared(k: &Kernel) -> Vec<usize> {
    let scratch = reduction_types(k).len() as u64 * 4 * k.workgroup_invocations();
    let mut total: u64 = k.shared.iter().map(|s| 4 * s.len as u64).sum::<u64>() + scratch;
    let mut order: Vec<usize> = (0..k.shared.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(k.shared[i].len));
    let mut dynamic = Vec::new();
    for i in order {
        if total <= CUDA_STATIC_SHARED_BYTES {
            break;
        }
        total -= 4 * k.shared[i].len as u64;
        dynamic.push(i);
    }
    dynamic
}

/// `__launch_bounds__`' second argument for a workgroup of `invocations`.
fn min_resident_workgroups(invocations: u64) -> u64 {
    (MIN_RESIDENT_INVOCATIONS / invocations.max(1)).max(1)
}

/// Renders the source of one backend.
pub fn render(k: &Kernel, d: &dyn Dialect) -> Result<String, CodegenError> {
    let mut ctx = Context::new();
    ctx.insert("name", &k.name);
    ctx.insert("class", &format!("{:?}", k.class).to_lowercase());
    ctx.insert("source_file", &k.source.file);
    ctx.insert("source_line", &k.source.line);
    ctx.insert("source_hash", &k.source.hash);
    ctx.insert("doc", &k.doc.lines().collect::<Vec<_>>());
    ctx.insert("workgroup", &k.workgroup);
    ctx.insert("invocations", &k.workgroup_invocations());
    ctx.insert("min_blocks", &min_resident_workgroups(k.workgroup_invocations()));

    let mut specs = Vec::new();
    let mut buffers = Vec::new();
    let mut push = Vec::new();
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
    let word_views = word_views(k);
    let buffer_ctx: Vec<BufferCtx> = buffers
        .iter()
        .enumerate()
        .map(|(i, (name, elem, access))| {
            let views = word_views
                .iter()
                .filter(|(p, _)| ident(&k.params[p.0 as usize].name) == *name)
                .map(|&(_, words)| ViewCtx { name: d.word_view(name, words), ty: d.word_vector(elem.value_type(), words) })
                .collect();
            BufferCtx { binding: i as u32, name: name.clone(), ty: d.storage_type(*elem), read_only: *access == Access::ReadOnly, views }
        })
        .collect();
    ctx.insert("needs_8bit", &buffers.iter().any(|(_, e, _)| e.size_bytes() == 1));
    ctx.insert("needs_16bit", &buffers.iter().any(|(_, e, _)| e.size_bytes() == 2));

    let sizes = Printer::new(d, k, 0);
    let lens: Vec<String> = k.shared.iter().map(|s| d.shared_len(s.len, s.size.as_ref().map(|e| sizes.expr(e)))).collect();
    let dynamic = if d.name() == "cuda" { cuda_dynamic_shared(k) } else { Vec::new() };
    let mut shared: Vec<String> = Vec::new();
    // Arrays past CUDA's static limit live in one dynamic region, each at a 16-byte
    // multiple: `ok_dyn_shared + offset`; `dyn_bytes` is the region's size per instance.
    let mut offset = String::from("0u");
    if !dynamic.is_empty() {
        shared.push("extern __shared__ __align__(16) unsigned char ok_dyn_shared[]".into());
    }
    for (i, s) in k.shared.iter().enumerate() {
        if dynamic.contains(&i) {
            let ty = d.scalar(s.elem);
            shared.push(format!("{ty}* const {} = reinterpret_cast<{ty}*>(ok_dyn_shared + ({offset}))", shared_name(&s.name)));
            offset = format!("{offset} + (({} + 3u) / 4u) * 16u", lens[i]);
        } else {
            shared.push(d.shared_decl(s.elem, &shared_name(&s.name), &lens[i]));
        }
    }
    ctx.insert("dyn_bytes", &(!dynamic.is_empty()).then_some(offset));
    for ty in reduction_types(k) {
        shared.push(d.shared_decl(ty, &scratch_name(ty), &k.workgroup_invocations().to_string()));
    }
    ctx.insert("shared", &shared);
    ctx.insert("uses_fma", &uses_fma(k));
    ctx.insert("uses_mma", &uses_mma(k));
    let (mma_c, mma_b) = mma_scratch_words(k);
    ctx.insert("mma_c_words", &mma_c);
    ctx.insert("mma_b_words", &mma_b);
    ctx.insert("fma_spec_id", &FMA_SPEC_ID);
    ctx.insert("f16_spec_id", &F16_SPEC_ID);
    let functions: Vec<String> = k.functions.iter().map(|f| Printer::function(d, k, f)).collect();
    ctx.insert("functions", &functions);
    ctx.insert("body", &Printer::new(d, k, 1).body());

    // The C++ signatures.
    let mut params: Vec<String> = Vec::new();
    let mut args: Vec<String> = Vec::new();
    match d.name() {
        "cuda" => {
            for (name, elem, access) in &buffers {
                let c = if *access == Access::ReadOnly { "const " } else { "" };
                params.push(format!("{c}{}* __restrict__ {name}", d.storage_type(*elem)));
                args.push(name.clone());
            }
            if !push.is_empty() {
                params.push(format!("const ok_push_{} pc", k.name));
                args.push("pc".into());
            }
        }
        "msl" => {
            for (i, (name, elem, access)) in buffers.iter().enumerate() {
                let c = if *access == Access::ReadOnly { "const " } else { "" };
                params.push(format!("device {c}{}* {name} [[buffer({i})]]", d.storage_type(*elem)));
            }
            if !push.is_empty() {
                params.push(format!("constant ok_push_{}& pc [[buffer({})]]", k.name, buffers.len()));
            }
            params.extend(
                [
                    "uint3 ok_lid [[thread_position_in_threadgroup]]",
                    "uint3 ok_gid [[threadgroup_position_in_grid]]",
                    "uint3 ok_ngroups [[threadgroups_per_grid]]",
                    "uint3 ok_wg [[threads_per_threadgroup]]",
                    "uint ok_lindex [[thread_index_in_threadgroup]]",
                ]
                .map(String::from),
            );
        }
        _ => {}
    }
    ctx.insert("params", &params.join(", "));
    ctx.insert("args", &args.join(", "));
    ctx.insert("instances", &instances(k));
    ctx.insert("buffers", &buffer_ctx);
    ctx.insert("push", &push);
    ctx.insert("specs", &specs);

    let template = match d.name() {
        "cuda" => "cuda/kernel.cu.tera",
        "glsl" => "glsl/kernel.comp.tera",
        _ => "msl/kernel.metal.tera",
    };
    let backend = match d.name() {
        "cuda" => "cuda",
        "glsl" => "vulkan",
        _ => "metal",
    };
    let err = |message: String| CodegenError::Template { kernel: k.name.clone(), backend, template: template.into(), message };
    let t = tera().map_err(err)?;
    let mut text = t.render(template, &ctx).map_err(|e| err(chain(&e)))?;
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text)
}

/// CUDA C++ source of a kernel.
pub fn cuda(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &Cuda)
}

/// GLSL source of a kernel.
pub fn glsl(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &Glsl)
}

/// MSL source of a kernel.
pub fn msl(k: &Kernel) -> Result<String, CodegenError> {
    render(k, &Msl)
}

/// Scalar spelled for the manifest.
pub fn scalar_name(s: Scalar) -> &'static str {
    s.name()
}
