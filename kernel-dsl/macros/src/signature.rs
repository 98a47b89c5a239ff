//! The kernel's parameters: storage buffers `&[T]` / `&mut [T]`, `#[push]` scalars and
//! `#[spec(default = …)]` specialization constants.

use onekernel_dsl::ir::{Access, ParamKind};
use onekernel_dsl::types::{Literal, Scalar, StorageType};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, ExprUnary, FnArg, Lit, Pat, Type, UnOp};

/// A parsed parameter, before spans are registered.
pub struct ParsedParam {
    pub name: String,
    pub kind: ParamKind,
    pub span: Span,
    /// `#[len(expr)]` of a buffer: lowered once every parameter is known.
    pub len: Option<Expr>,
}

/// Parses every parameter; `type_args` maps type-axis names to this instance's type.
pub fn parse(sig: &syn::Signature, type_args: &HashMap<String, StorageType>) -> syn::Result<Vec<ParsedParam>> {
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(sig.generics.span(), "kernels cannot be generic; use a type axis: `variants(T = [f32, f16])`"));
    }
    if let Some(t) = &sig.asyncness {
        return Err(syn::Error::new(t.span(), "kernels cannot be `async`"));
    }
    if let syn::ReturnType::Type(_, t) = &sig.output {
        return Err(syn::Error::new(t.span(), "kernels return nothing; write results into a `&mut [T]` buffer"));
    }
    let mut out = Vec::new();
    for arg in &sig.inputs {
        let FnArg::Typed(pt) = arg else {
            return Err(syn::Error::new(arg.span(), "kernels are free functions; `self` is not allowed"));
        };
        let Pat::Ident(pi) = &*pt.pat else {
            return Err(syn::Error::new(pt.pat.span(), "a parameter is a plain identifier"));
        };
        let name = pi.ident.to_string();
        let mut push = false;
        let mut spec: Option<Option<Expr>> = None;
        let mut len: Option<Expr> = None;
        for a in &pt.attrs {
            if a.path().is_ident("push") {
                push = true;
            } else if a.path().is_ident("len") {
                len = Some(
                    a.parse_args::<Expr>().map_err(|e| syn::Error::new(e.span(), "write `#[len(expr)]`: the buffer's minimum length in elements"))?,
                );
            } else if a.path().is_ident("spec") {
                let mut default = None;
                if !matches!(a.meta, syn::Meta::Path(_)) {
                    a.parse_nested_meta(|m| {
                        if m.path.is_ident("default") {
                            default = Some(m.value()?.parse::<Expr>()?);
                            Ok(())
                        } else {
                            Err(m.error("`#[spec]` takes `default = <literal>`"))
                        }
                    })?;
                }
                spec = Some(default);
            } else if !a.path().is_ident("doc") {
                return Err(syn::Error::new(a.span(), "parameter attributes are `#[push]`, `#[spec(default = …)]` and, on buffers, `#[len(…)]`"));
            }
        }
        let span = pi.ident.span();
        let kind = match &*pt.ty {
            Type::Reference(r) => {
                if push || spec.is_some() {
                    return Err(syn::Error::new(pt.ty.span(), "`#[push]` and `#[spec]` take scalars (u32, i32, f32, bool), not buffers"));
                }
                let Type::Slice(slice) = &*r.elem else {
                    return Err(syn::Error::new(r.elem.span(), "a buffer is a slice: `&[T]` or `&mut [T]`"));
                };
                let elem = storage_type(&slice.elem, type_args)?;
                let access = if r.mutability.is_some() { Access::ReadWrite } else { Access::ReadOnly };
                ParamKind::Buffer { elem, access, len: None }
            }
            other => {
                if let Some(l) = &len {
                    return Err(syn::Error::new(l.span(), "`#[len]` declares a buffer's length; it does not apply to scalars"));
                }
                let ty = scalar_type(other)?;
                match (push, spec) {
                    (true, Some(_)) => return Err(syn::Error::new(span, "a parameter is either `#[push]` or `#[spec]`, not both")),
                    (true, None) => ParamKind::Push { ty },
                    (false, Some(default)) => {
                        let default = match default {
                            Some(e) => Some(literal_of(&e, ty)?),
                            None => None,
                        };
                        ParamKind::Spec { ty, default, values: None }
                    }
                    (false, None) => {
                        return Err(syn::Error::new(
                            span,
                            format!(
                            "scalar parameter `{name}` needs `#[push]` (a per-launch value) or `#[spec(default = …)]` (a specialization constant)"
                        ),
                        ))
                    }
                }
            }
        };
        out.push(ParsedParam { name, kind, span, len });
    }
    Ok(out)
}

fn type_name(t: &Type) -> Option<String> {
    match t {
        Type::Path(p) if p.qself.is_none() => p.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

fn storage_type(t: &Type, type_args: &HashMap<String, StorageType>) -> syn::Result<StorageType> {
    let name = type_name(t).unwrap_or_default();
    if let Some(st) = type_args.get(&name) {
        return Ok(*st);
    }
    StorageType::parse(&name)
        .ok_or_else(|| syn::Error::new(t.span(), "unsupported buffer element type; use f32, i32, u32, f16, bf16, u8, u16 or i8 (or a type axis)"))
}

fn scalar_type(t: &Type) -> syn::Result<Scalar> {
    let name = type_name(t).unwrap_or_default();
    Scalar::parse(&name).ok_or_else(|| syn::Error::new(t.span(), "unsupported scalar type; use u32, i32, f32 or bool"))
}

/// A literal (optionally negated) of the given type.
pub fn literal_of(e: &Expr, ty: Scalar) -> syn::Result<Literal> {
    let (neg, inner) = match e {
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => (true, &**expr),
        _ => (false, e),
    };
    let bad = || syn::Error::new(e.span(), format!("expected a {ty} literal"));
    let Expr::Lit(ExprLit { lit, .. }) = inner else { return Err(bad()) };
    Ok(match (lit, ty) {
        (Lit::Bool(b), Scalar::Bool) if !neg => Literal::Bool(b.value),
        (Lit::Int(i), Scalar::U32) if !neg => Literal::U32(i.base10_parse()?),
        (Lit::Int(i), Scalar::I32) => {
            let v: i64 = i.base10_parse()?;
            let v = if neg { -v } else { v };
            Literal::I32(i32::try_from(v).map_err(|_| bad())?)
        }
        (Lit::Float(f), Scalar::F32) => {
            let v: f32 = f.base10_parse()?;
            Literal::f32(if neg { -v } else { v })
        }
        _ => return Err(bad()),
    })
}
