//! What the code generator knows about a kernel before it prints anything, computed once
//! from the validated IR ([`KernelInfo::of`]) and read by every dialect's template and by
//! the manifest, so no backend derives a fact about the kernel on its own.

use crate::dialect::{Cuda, Dialect};
use crate::print::{has_arrivals, has_pair_reduction, reduction_types};
use onekernel_dsl::ir::{Kernel, ParamId, ParamKind, StmtKind};
use onekernel_dsl::types::{Literal, Scalar};
use serde::Serialize;
use std::collections::BTreeSet;

/// The facts about one kernel that templates and the manifest share.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelInfo {
    /// The kernel (or a library function it carries) uses `fma`: GLSL declares the
    /// `ok_native_fma` switch ([`FMA_SPEC_ID`]).
    pub uses_fma: bool,
    /// The kernel has register tiles: CUDA includes the `mma.sync` helpers, GLSL enables
    /// cooperative matrices, MSL includes the `simdgroup_matrix` helpers.
    pub uses_tiles: bool,
    /// Shared arrays (indices into `Kernel::shared`) that operand tiles load from: GLSL
    /// declares them as `f16vec2` pairs.
    pub tile_operand_shared: BTreeSet<usize>,
    /// Shared arrays (indices into `Kernel::shared`) that `tile_mma_panel` reads panels
    /// from: CUDA aligns them to 1024 bytes (the 128-byte swizzle's atoms).
    pub panel_shared: BTreeSet<usize>,
    /// Buffers that operand tiles load from: GLSL views them as `f16vec2` pairs.
    pub tile_operand_buffers: BTreeSet<ParamId>,
    /// The (buffer, element count) pairs its `load_words` statements read, in parameter
    /// order: GLSL declares a vector-typed view of each.
    pub word_views: BTreeSet<(ParamId, u32)>,
    /// Value types it reduces, each with a scratch array of one value per invocation.
    pub reduction_types: Vec<Scalar>,
    /// Whether a reduction carries indices (`workgroup_argmax` / `argmin`): one more u32
    /// scratch array, `ok_red_index`.
    pub pair_reductions: bool,
    /// Whether the kernel has a `last_arrival`: a shared flag, `ok_arrival`, of
    /// `ARRIVAL_FLAG_WORDS` words.
    pub arrivals: bool,
    /// With arrivals, the read-write buffers the kernel also reads: what one workgroup
    /// may read of another's writes, declared coherent (GLSL `coherent`, MSL
    /// `coherent(device)`). Buffers only written need not be.
    pub coherent_buffers: BTreeSet<ParamId>,
    /// Shared arrays (indices into `Kernel::shared`) CUDA keeps in dynamic shared memory.
    pub cuda_dynamic_shared: Vec<usize>,
    /// Bytes of shared memory beyond the kernel's own arrays: reduction scratch.
    pub scratch_bytes: u32,
    /// Every variant: one per combination of variant-axis values.
    pub instances: Vec<Instance>,
    /// The kernel has specialization constants (CUDA then compiles a template).
    pub has_specs: bool,
    /// The kernel has push constants.
    pub has_push: bool,
}

impl KernelInfo {
    /// The facts of `k` (validated IR).
    pub fn of(k: &Kernel) -> Self {
        let reduction_types = reduction_types(k);
        let pair_reductions = has_pair_reduction(k);
        let scratch_arrays = reduction_types.len() as u32 + pair_reductions as u32;
        let arrivals = has_arrivals(k);
        let scratch_bytes = scratch_arrays * 4 * k.workgroup_invocations() as u32 + if arrivals { 4 * crate::print::ARRIVAL_FLAG_WORDS } else { 0 };
        let (tile_operand_shared, tile_operand_buffers, panel_shared) = tile_operand_sources(k);
        KernelInfo {
            uses_fma: uses_fma(k),
            uses_tiles: !k.tiles.is_empty(),
            tile_operand_shared,
            panel_shared,
            tile_operand_buffers,
            word_views: word_views(k),
            cuda_dynamic_shared: cuda_dynamic_shared(k, scratch_arrays),
            reduction_types,
            pair_reductions,
            arrivals,
            coherent_buffers: if arrivals { read_write_buffers_read(k) } else { BTreeSet::new() },
            scratch_bytes,
            instances: instances(k),
            has_specs: k.params.iter().any(|p| matches!(p.kind, ParamKind::Spec { .. })),
            has_push: k.params.iter().any(|p| matches!(p.kind, ParamKind::Push { .. })),
        }
    }
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

/// Every combination of variant-axis values (free spec constants at their default),
/// in axis order, the first axis varying slowest.
fn instances(k: &Kernel) -> Vec<Instance> {
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
fn uses_fma(k: &Kernel) -> bool {
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

/// The shared arrays (indices into `Kernel::shared`) and buffers that operand tiles
/// (`tile_a`, `tile_b`) are loaded from: GLSL declares such an array, and views such a
/// buffer, as `f16vec2` pairs (the component type of the cooperative matrix).
fn tile_operand_sources(k: &Kernel) -> (BTreeSet<usize>, BTreeSet<ParamId>, BTreeSet<usize>) {
    use onekernel_dsl::ir::{Place, StmtKind, TileOp, TileRole};
    let (mut shared, mut buffers, mut panels) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| {
        if let StmtKind::Tile(t) = &s.kind {
            // A panel is read as B operands.
            if let TileOp::PanelMma { panel: Place::Shared(id), .. } = &**t {
                shared.insert(id.0 as usize);
                panels.insert(id.0 as usize);
            }
            let operand = match &**t {
                TileOp::Load { tile, src, .. } => Some((tile, src)),
                // A `tile_set` of an operand loads it from its scratch.
                TileOp::Set { tile, scratch, .. } => Some((tile, scratch)),
                _ => None,
            };
            if let Some((tile, src)) = operand {
                if k.tiles.get(tile.0 as usize).is_some_and(|d| d.role != TileRole::Acc) {
                    match src {
                        Place::Shared(id) => {
                            shared.insert(id.0 as usize);
                        }
                        Place::Buffer(p) => {
                            buffers.insert(*p);
                        }
                        Place::Local(_) => {}
                    }
                }
            }
        }
    });
    (shared, buffers, panels)
}

/// The (buffer, element count) pairs that a kernel's `load_words` and multi-element
/// `async_copy` statements read, in parameter order: GLSL declares a vector-typed view of
/// each (a copy is one aligned vector load where the language has no asynchronous one).
fn word_views(k: &Kernel) -> BTreeSet<(ParamId, u32)> {
    use onekernel_dsl::ir::StmtKind;
    let mut views = BTreeSet::new();
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| match &s.kind {
        StmtKind::LoadWords { src: onekernel_dsl::ir::Place::Buffer(src), words, .. } => {
            views.insert((*src, *words));
        }
        StmtKind::AsyncCopy { src, words, .. } if *words > 1 => {
            views.insert((*src, *words));
        }
        _ => {}
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
fn cuda_dynamic_shared(k: &Kernel, scratch_arrays: u32) -> Vec<usize> {
    let scratch = scratch_arrays as u64 * 4 * k.workgroup_invocations();
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

/// Literal text of a spec value in a dialect.
pub(crate) fn literal(d: &dyn Dialect, l: Literal) -> String {
    match l {
        Literal::F32(b) => d.float_literal(b),
        Literal::U32(v) => d.uint_literal(v),
        Literal::I32(v) => d.int_literal(v),
        Literal::Bool(b) => b.to_string(),
    }
}

/// The read-write buffers a kernel loads from (indexing, `load_words`, tile loads).
fn read_write_buffers_read(k: &Kernel) -> BTreeSet<ParamId> {
    let rw = |p: &ParamId| matches!(k.params[p.0 as usize].kind, ParamKind::Buffer { access: onekernel_dsl::ir::Access::ReadWrite, .. });
    let mut read = BTreeSet::new();
    onekernel_dsl::visit::walk_stmts(&k.body, &mut |s| {
        match &s.kind {
            StmtKind::LoadWords { src: onekernel_dsl::ir::Place::Buffer(p), .. } | StmtKind::AsyncCopy { src: p, .. } => {
                read.insert(*p);
            }
            StmtKind::Tile(t) => {
                if let onekernel_dsl::ir::TileOp::Load { src: onekernel_dsl::ir::Place::Buffer(p), .. } = t.as_ref() {
                    read.insert(*p);
                }
            }
            _ => {}
        }
        for e in onekernel_dsl::visit::stmt_exprs(s) {
            onekernel_dsl::visit::walk_expr(e, &mut |e| {
                if let onekernel_dsl::ir::ExprKind::Index { place: onekernel_dsl::ir::Place::Buffer(p), .. } = &e.kind {
                    read.insert(*p);
                }
            });
        }
    });
    read.retain(rw);
    read
}
