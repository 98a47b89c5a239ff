//! Parsing of the attribute arguments: `#[kernel(workgroup = …, exact | fast,
//! resident = N, variants(axis = [v, …], …))]`.

use onekernel_dsl::ir::Determinism;
use onekernel_dsl::types::{Literal, StorageType};
use proc_macro2::Span;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, Meta, Token};

/// One `variants(...)` axis.
pub enum Axis {
    /// A boolean or integer axis: becomes a specialization constant.
    Value { name: String, values: Vec<Literal>, span: Span },
    /// A type axis: one entry point per storage type.
    Type { name: String, values: Vec<StorageType>, span: Span },
}

/// The parsed attribute.
pub struct KernelAttr {
    pub workgroup: [u32; 3],
    pub class: Determinism,
    pub resident: Option<u32>,
    pub axes: Vec<Axis>,
}

const USAGE: &str = "expected `#[kernel(workgroup = N | (X, Y) | (X, Y, Z), exact | fast, \
                     resident = N, variants(axis = [values…], …))]`";

pub fn parse(attr: proc_macro2::TokenStream) -> syn::Result<KernelAttr> {
    let metas = Punctuated::<Meta, Token![,]>::parse_terminated.parse2(attr)?;
    let mut out = KernelAttr { workgroup: [0; 3], class: Determinism::Exact, resident: None, axes: Vec::new() };
    let mut have_workgroup = false;
    let mut resident_span = Span::call_site();
    let mut have_class = false;
    for m in metas {
        let key = m.path().get_ident().map(|i| i.to_string()).unwrap_or_default();
        match (key.as_str(), &m) {
            ("workgroup", Meta::NameValue(nv)) => {
                out.workgroup = workgroup(&nv.value)?;
                have_workgroup = true;
            }
            ("exact" | "fast", Meta::Path(_)) => {
                if have_class {
                    return Err(syn::Error::new(m.span(), "the determinism class is given twice; write either `exact` or `fast`"));
                }
                have_class = true;
                out.class = if key == "exact" { Determinism::Exact } else { Determinism::Fast };
            }
            ("resident", Meta::NameValue(nv)) => {
                let n = int_lit(&nv.value)?;
                if n == 0 || n > 32 {
                    return Err(syn::Error::new(nv.value.span(), "`resident` takes 1 … 32 workgroups per multiprocessor"));
                }
                out.resident = Some(n);
                resident_span = nv.value.span();
            }
            ("variants", Meta::List(list)) => {
                let axes = Punctuated::<syn::MetaNameValue, Token![,]>::parse_terminated.parse2(list.tokens.clone())?;
                for a in axes {
                    out.axes.push(axis(&a)?);
                }
            }
            _ => {
                return Err(syn::Error::new(m.span(), format!("unknown kernel attribute argument; {USAGE}")));
            }
        }
    }
    if !have_workgroup {
        return Err(syn::Error::new(Span::call_site(), format!("missing `workgroup = …`; {USAGE}")));
    }
    if let Some(n) = out.resident {
        let invocations: u32 = out.workgroup.iter().product();
        if n * invocations > 2048 {
            return Err(syn::Error::new(
                resident_span,
                format!("`resident = {n}` workgroups of {invocations} invocations exceed the 2048 a multiprocessor holds"),
            ));
        }
    }
    Ok(out)
}

fn int_lit(e: &Expr) -> syn::Result<u32> {
    match e {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<u32>(),
        _ => Err(syn::Error::new(e.span(), "expected an integer literal")),
    }
}

fn workgroup(e: &Expr) -> syn::Result<[u32; 3]> {
    let dims: Vec<u32> = match e {
        Expr::Tuple(t) => t.elems.iter().map(int_lit).collect::<syn::Result<_>>()?,
        Expr::Array(a) => a.elems.iter().map(int_lit).collect::<syn::Result<_>>()?,
        Expr::Paren(p) => vec![int_lit(&p.expr)?],
        _ => vec![int_lit(e)?],
    };
    if dims.is_empty() || dims.len() > 3 {
        return Err(syn::Error::new(e.span(), "workgroup takes 1 to 3 dimensions"));
    }
    let mut w = [1u32; 3];
    w[..dims.len()].copy_from_slice(&dims);
    if w.contains(&0) || w.iter().fold(1u64, |acc, &d| acc.saturating_mul(d as u64)) > 1024 {
        return Err(syn::Error::new(e.span(), format!("workgroup {w:?} is not allowed: each dimension ≥ 1 and at most 1024 invocations in all")));
    }
    Ok(w)
}

fn axis(nv: &syn::MetaNameValue) -> syn::Result<Axis> {
    let name = nv.path.get_ident().ok_or_else(|| syn::Error::new(nv.path.span(), "a variant axis is named by one identifier"))?.to_string();
    let Expr::Array(arr) = &nv.value else {
        return Err(syn::Error::new(nv.value.span(), "a variant axis lists its values: `axis = [a, b, …]`"));
    };
    if arr.elems.is_empty() {
        return Err(syn::Error::new(arr.span(), "a variant axis needs at least one value"));
    }
    let span = nv.path.span();
    if let Some(Expr::Path(_)) = arr.elems.first() {
        let mut values = Vec::new();
        for e in &arr.elems {
            let t = match e {
                Expr::Path(p) => p.path.get_ident().and_then(|i| StorageType::parse(&i.to_string())),
                _ => None,
            };
            values.push(t.ok_or_else(|| syn::Error::new(e.span(), "a type axis lists storage types: f32, i32, u32, f16, bf16, u8, u16, i8"))?);
        }
        return Ok(Axis::Type { name, values, span });
    }
    let mut values = Vec::new();
    for e in &arr.elems {
        let v = match e {
            Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Literal::Bool(b.value),
            Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => match i.suffix() {
                "i32" => Literal::I32(i.base10_parse()?),
                "" | "u32" => Literal::U32(i.base10_parse()?),
                _ => return Err(syn::Error::new(e.span(), "variant values are bool, u32 or i32 literals")),
            },
            _ => return Err(syn::Error::new(e.span(), "variant values are bool or integer literals, or storage types")),
        };
        if values.first().is_some_and(|f: &Literal| f.ty() != v.ty()) {
            return Err(syn::Error::new(e.span(), "all values of a variant axis must have one type"));
        }
        if values.contains(&v) {
            return Err(syn::Error::new(e.span(), "duplicate variant value"));
        }
        values.push(v);
    }
    Ok(Axis::Value { name, values, span })
}
