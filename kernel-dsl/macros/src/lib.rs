//! # onekernel-macros
//!
//! The `#[kernel]` attribute. It parses a Rust-like function at compile time, lowers
//! its body to onekernel IR (`onekernel_dsl::ir`), type-checks and validates it, and
//! reports every problem as a compile error at the offending span. The function is
//! replaced by one that returns the validated IR, and the kernel is registered in the
//! catalogue (`onekernel_dsl::catalogue`) so the code generator can enumerate it.
//!
//! ```ignore
//! use onekernel_macros::kernel;
//!
//! /// y[i] = a · x[i] + y[i]
//! #[kernel(workgroup = 64)]
//! pub fn saxpy(x: &[f32], y: &mut [f32], #[push] a: f32, #[push] n: u32) {
//!     let i = global_id().x;
//!     if i < n {
//!         y[i] = fma(a, x[i], y[i]);
//!     }
//! }
//! // saxpy() -> Result<onekernel_dsl::Kernel, CatalogueError>
//! ```
//!
//! Attribute arguments: `workgroup = N | (X, Y) | (X, Y, Z)`, the determinism class
//! `exact` (default) or `fast`, and `variants(axis = [values…], …)`. A bool or integer
//! axis becomes a specialization constant the body reads by name; a type axis
//! (`T = [f32, f16]`) may be used as a buffer element type and gives one kernel per
//! type, named `<fn>_<type>`, and the function then returns all of them.

mod attr;
mod emit;
#[cfg(test)]
mod fuzz_tests;
mod lower;
mod signature;

use attr::{Axis, KernelAttr};
use onekernel_dsl::ir::{Kernel, Param, ParamKind, SourceInfo};
use onekernel_dsl::types::StorageType;
use proc_macro::TokenStream;
use quote::ToTokens;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// Declares a kernel written in the onekernel DSL. See the crate documentation.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    match expand(attr.into(), item.into()) {
        Ok(t) => t.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    // Name the kernel in every message, as runtime errors do.
    let name = syn::parse2::<syn::ItemFn>(item.clone()).map(|f| f.sig.ident.to_string()).ok();
    expand_inner(attr, item).map_err(|e| match name {
        Some(name) => {
            let mut out: Option<syn::Error> = None;
            for part in e {
                let msg = part.to_string();
                let msg = if msg.starts_with("kernel `") { msg } else { format!("kernel `{name}`: {msg}") };
                let part = syn::Error::new(part.span(), msg);
                match &mut out {
                    Some(o) => o.combine(part),
                    None => out = Some(part),
                }
            }
            out.unwrap_or(e_fallback())
        }
        None => e,
    })
}

fn e_fallback() -> syn::Error {
    syn::Error::new(proc_macro2::Span::call_site(), "invalid kernel")
}

fn expand_inner(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> syn::Result<proc_macro2::TokenStream> {
    let hash = fnv1a(&format!("{attr}\n{item}"));
    let func: syn::ItemFn = syn::parse2(item)?;
    let attr = attr::parse(attr)?;
    for a in &func.attrs {
        if !a.path().is_ident("doc") {
            return Err(syn::Error::new(a.span(), "only doc comments may accompany `#[kernel]`"));
        }
    }
    let type_axes: Vec<(&String, &Vec<StorageType>)> = attr
        .axes
        .iter()
        .filter_map(|a| match a {
            Axis::Type { name, values, .. } => Some((name, values)),
            Axis::Value { .. } => None,
        })
        .collect();
    // Cartesian product of the type axes, in declaration order.
    let mut instances: Vec<Vec<(String, StorageType)>> = vec![vec![]];
    for (name, values) in &type_axes {
        instances = instances
            .into_iter()
            .flat_map(|prefix| {
                values.iter().map(move |v| {
                    let mut p = prefix.clone();
                    p.push(((*name).clone(), *v));
                    p
                })
            })
            .collect();
    }
    for a in &attr.axes {
        if let Axis::Type { name, span, .. } = a {
            let used = func.sig.inputs.iter().any(|arg| {
                let text = arg.to_token_stream().to_string();
                text.split(|c: char| !c.is_alphanumeric() && c != '_').any(|w| w == name)
            });
            if !used {
                return Err(syn::Error::new(*span, format!("type axis `{name}` is not used as a buffer element type (`&[{name}]`)")));
            }
        }
    }
    let mut kernels = Vec::new();
    for inst in &instances {
        let suffix: String = inst.iter().map(|(_, t)| format!("_{}", t.name())).collect();
        let name = format!("{}{suffix}", func.sig.ident);
        let type_args: HashMap<String, StorageType> = inst.iter().cloned().collect();
        kernels.push(build(&func, &attr, &name, &type_args, &hash)?);
    }
    emit::emit(&func, &kernels, !type_axes.is_empty())
}

fn build(func: &syn::ItemFn, attr: &KernelAttr, name: &str, type_args: &HashMap<String, StorageType>, hash: &str) -> syn::Result<Kernel> {
    let parsed = signature::parse(&func.sig, type_args)?;
    let mut lw = lower::Lowerer::new(Vec::new());
    let mut lens = Vec::new();
    for p in parsed {
        let span = lw.span_id(p.span);
        if let Some(l) = p.len {
            lens.push((lw.params.len(), l));
        }
        lw.params.push(Param { name: p.name, kind: p.kind, span });
    }
    for a in &attr.axes {
        if let Axis::Value { name: axis, values, span } = a {
            if lw.params.iter().any(|p| &p.name == axis) {
                return Err(syn::Error::new(*span, format!("variant axis `{axis}` has the name of a parameter")));
            }
            let ty = values[0].ty();
            let sid = lw.span_id(*span);
            lw.params.push(Param {
                name: axis.clone(),
                kind: ParamKind::Spec { ty, default: Some(values[0]), values: Some(values.clone()) },
                span: sid,
            });
        }
    }
    // Lengths may name any push or spec parameter and the variant axes, so they are
    // lowered once all of those are declared.
    for (i, expr) in lens {
        let e = lw.expr(&expr, Some(onekernel_dsl::types::Scalar::U32))?;
        if let ParamKind::Buffer { len, .. } = &mut lw.params[i].kind {
            *len = Some(e);
        }
    }
    let body = lw.body(&func.block.stmts)?;
    let functions = onekernel_dsl::mathlib::closure(lw.used_functions.iter().map(|s| s.as_str()));
    let doc = func
        .attrs
        .iter()
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value().trim().to_string()),
                _ => None,
            },
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let kernel = Kernel {
        name: name.to_string(),
        doc,
        workgroup: attr.workgroup,
        class: attr.class,
        resident: attr.resident,
        params: lw.params.clone(),
        shared: lw.shared.clone(),
        tiles: lw.tiles.clone(),
        locals: lw.locals.clone(),
        body,
        functions,
        spans: lw.spans.clone(),
        source: SourceInfo { file: String::new(), line: func.sig.ident.span().start().line as u32, hash: hash.to_string() },
    };
    if let Err(errors) = onekernel_dsl::validate::validate(&kernel) {
        let mut combined: Option<syn::Error> = None;
        for e in errors {
            let err = syn::Error::new(lw.compiler_span(e.span), format!("kernel `{name}`: {}", e.message));
            match &mut combined {
                Some(c) => c.combine(err),
                None => combined = Some(err),
            }
        }
        if let Some(c) = combined {
            return Err(c);
        }
    }
    Ok(kernel)
}

/// FNV-1a 64-bit, hex: a stable hash of the DSL source for the manifest.
fn fnv1a(s: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}
