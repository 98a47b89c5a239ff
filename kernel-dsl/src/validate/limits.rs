//! Resource limits: workgroup size, push-constant bytes, shared memory, spec defaults.

use super::{Diagnostics, ErrorKind};
use crate::ir::{Kernel, ParamKind, SpanId, StmtKind};
use crate::visit::walk_stmts;

/// Push constants are at most 128 bytes: the minimum Vulkan guarantees.
pub const MAX_PUSH_BYTES: u32 = 128;
/// Workgroup-shared memory limit by default: 227 KiB, the most any target offers (an
/// H100/H200 workgroup with CUDA's opt-in). A device that offers less rejects the
/// variant at launch (Vulkan: `maxComputeSharedMemorySize`, 48 KiB on NVIDIA, 32 KiB
/// on lavapipe; CUDA: the device's opt-in maximum); CUDA code keeps arrays beyond its
/// 48 KiB static limit in dynamic shared memory (docs/CODEGEN.md).
pub const SHARED_LIMIT_BYTES: u32 = 227 * 1024;
/// Most invocations in one workgroup (every target supports 1024).
pub const MAX_WORKGROUP_INVOCATIONS: u64 = 1024;

/// Limits a kernel is validated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of workgroup-shared memory.
    pub shared_bytes: u32,
    /// Bytes of push constants.
    pub push_bytes: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { shared_bytes: SHARED_LIMIT_BYTES, push_bytes: MAX_PUSH_BYTES }
    }
}

pub(super) fn check(k: &Kernel, limits: &Limits, d: &mut Diagnostics) {
    let invocations = k.workgroup_invocations();
    if k.workgroup.contains(&0) || invocations > MAX_WORKGROUP_INVOCATIONS {
        d.error(
            SpanId::NONE,
            ErrorKind::Limit,
            format!(
                "workgroup size {:?} is not allowed: every dimension must be ≥ 1 and the \
                 product ≤ {MAX_WORKGROUP_INVOCATIONS}",
                k.workgroup
            ),
        );
    }
    let mut reduce_span = None;
    walk_stmts(&k.body, &mut |s| {
        if matches!(s.kind, StmtKind::Reduce { .. }) && reduce_span.is_none() {
            reduce_span = Some(s.span);
        }
    });
    if let Some(span) = reduce_span {
        if !invocations.is_power_of_two() {
            d.error(
                span,
                ErrorKind::Limit,
                format!(
                    "workgroup reductions need a power-of-two workgroup (the stride-halving \
                     tree); this kernel has {invocations} invocations"
                ),
            );
        }
    }

    let push: Vec<_> = k.params.iter().filter(|p| matches!(p.kind, ParamKind::Push { .. })).collect();
    let push_bytes = 4 * push.len() as u32;
    if push_bytes > limits.push_bytes {
        d.error(
            push.last().map(|p| p.span).unwrap_or(SpanId::NONE),
            ErrorKind::Limit,
            format!(
                "push constants take {push_bytes} bytes ({} scalars of 4 bytes); the limit \
                 is {} bytes: pass the rest in a buffer",
                push.len(),
                limits.push_bytes
            ),
        );
    }

    let shared_bytes: u64 = k.shared.iter().map(|s| 4 * s.len as u64).sum();
    if shared_bytes > limits.shared_bytes as u64 {
        d.error(
            k.shared.last().map(|s| s.span).unwrap_or(SpanId::NONE),
            ErrorKind::Limit,
            format!("workgroup shared memory totals {shared_bytes} bytes; the limit is {} bytes", limits.shared_bytes),
        );
    }

    let mut names = std::collections::HashSet::new();
    for p in &k.params {
        if let ParamKind::Buffer { len: Some(len), .. } = &p.kind {
            if let Err(m) = crate::shapes::check(len) {
                d.error(len.span, ErrorKind::Unsupported, format!("`#[len]` of `{}`: {m}", p.name));
            } else if !len.ty.is_int() {
                d.error(len.span, ErrorKind::Type, format!("`#[len]` of `{}` must be an integer, found {}", p.name, len.ty));
            }
        }
        if !names.insert(p.name.as_str()) {
            d.error(p.span, ErrorKind::Type, format!("parameter `{}` is declared twice", p.name));
        }
        if let ParamKind::Spec { ty, default, values } = &p.kind {
            match default {
                None => d.error(
                    p.span,
                    ErrorKind::SpecDefault,
                    format!(
                        "specialization constant `{}` has no default; write \
                         `#[spec(default = …)]`",
                        p.name
                    ),
                ),
                Some(v) if v.ty() != *ty => {
                    d.error(p.span, ErrorKind::SpecDefault, format!("default of `{}` is a {}, expected {ty}", p.name, v.ty()))
                }
                Some(v) => {
                    if let Some(values) = values {
                        if values.is_empty() || !values.contains(v) {
                            d.error(p.span, ErrorKind::SpecDefault, format!("variant axis `{}` must list its default value", p.name));
                        }
                        if values.iter().any(|x| x.ty() != *ty) {
                            d.error(p.span, ErrorKind::Type, format!("values of variant axis `{}` must all be {ty}", p.name));
                        }
                    }
                }
            }
        }
    }
}
