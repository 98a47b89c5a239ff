//! Kernel-local helpers written as closures, so one kernel can decode a format or
//! score a row in one place and use it in several:
//!
//! ```text
//! let elem = |w: &[u32], byte: u32, fmt: u32| -> f32 { …; value };
//! let x = elem(k, row, k_type);
//! ```
//!
//! A closure is declared at the top level of the body. One whose body is a single
//! expression is callable anywhere and inlined in place, each parameter standing for its
//! (pure) argument expression. One with statements is called as the whole value of a
//! `let` or an assignment: scalar arguments are evaluated once into fresh locals, buffer
//! arguments name a buffer parameter, the body's statements follow, and its tail
//! expression is the value. The body sees only its parameters and
//! the kernel's parameters (no captured locals), so inlining at the call site means
//! what it would mean in Rust; `return` (which would leave the kernel) and `break` /
//! `continue` outside a loop of the body are rejected, and so is recursion.

use super::{err, Lowerer, Name};
use onekernel_dsl::ir::{Expr, ExprKind, ParamKind, Stmt, StmtKind};
use onekernel_dsl::types::{Scalar, StorageType, VarType};
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned;

/// A parameter of a kernel closure.
#[derive(Clone)]
enum ClosureParam {
    Scalar(Scalar),
    Buffer(StorageType),
}

/// A declared kernel closure.
#[derive(Clone)]
pub struct Closure {
    name: String,
    params: Vec<(String, ClosureParam, Span)>,
    ret: Scalar,
    stmts: Vec<syn::Stmt>,
    tail: syn::Expr,
}

/// A checked call: the closure, its buffer parameters bound to kernel buffers, and its
/// scalar parameters with their lowered arguments.
type Arguments = (Closure, HashMap<String, Name>, Vec<(String, Scalar, Expr)>);

const USAGE: &str = "a kernel closure is `let name = |a: u32, w: &[f32]| -> f32 { …; value };`";

/// The callee of `e` when `e` is a call of a declared closure.
pub fn closure_call<'a>(l: &Lowerer, e: &'a syn::Expr) -> Option<(usize, &'a syn::ExprCall)> {
    let syn::Expr::Call(c) = e else { return None };
    let syn::Expr::Path(p) = &*c.func else { return None };
    let name = p.path.get_ident()?.to_string();
    l.closures.iter().rposition(|k| k.name == name).filter(|&i| !l.closures[i].stmts.is_empty()).map(|i| (i, c))
}

impl Lowerer {
    /// Whether `name` is a declared closure (for the error on other uses).
    pub fn is_closure(&self, name: &str) -> bool {
        self.closures.iter().any(|k| k.name == name)
    }

    /// The message for a name that resolves to nothing (inside a closure, a local of
    /// the kernel is out of reach by design).
    pub fn unknown_name(&self, name: &str) -> String {
        match self.inlining.last() {
            Some(&i) => format!(
                "cannot find value `{name}` in closure `{}`: a kernel closure sees its parameters and the kernel's parameters only; pass `{name}` as an argument",
                self.closures[i].name
            ),
            None => format!(
                "cannot find value `{name}` in this kernel. A kernel body sees its parameters and its own `let`s only, \
                 no items outside it (a `const`, a `static`, a function): write a constant in the body \
                 (`let {name} = 0.125;`) or pass it as a `#[push]` or `#[spec]` parameter"
            ),
        }
    }

    /// Registers `let name = |…| -> T { … };`.
    pub fn declare_closure(&mut self, name: &str, c: &syn::ExprClosure, mutable: bool, span: Span) -> syn::Result<()> {
        if self.depth != 0 || !self.inlining.is_empty() {
            return Err(err(span, "kernel closures are declared at the top level of the kernel body"));
        }
        if mutable {
            return Err(err(span, format!("write `let {name} = |…| …` (no `mut`)")));
        }
        if c.asyncness.is_some() || c.movability.is_some() || c.capture.is_some() || c.constness.is_some() || c.lifetimes.is_some() {
            return Err(err(c.span(), USAGE));
        }
        let mut params = Vec::new();
        for input in &c.inputs {
            let syn::Pat::Type(pt) = input else {
                return Err(err(input.span(), "every closure parameter needs a type: `x: u32` or `w: &[f32]`"));
            };
            let syn::Pat::Ident(pi) = &*pt.pat else {
                return Err(err(pt.pat.span(), "a closure parameter is one identifier"));
            };
            let kind = match &*pt.ty {
                syn::Type::Reference(r) if r.mutability.is_none() => match &*r.elem {
                    syn::Type::Slice(s) => {
                        let elem = match &*s.elem {
                            syn::Type::Path(p) => p.path.get_ident().and_then(|i| StorageType::parse(&i.to_string())),
                            _ => None,
                        };
                        ClosureParam::Buffer(
                            elem.ok_or_else(|| err(s.elem.span(), "a buffer parameter of a closure names a storage type: `&[u32]`, `&[f16]` …"))?,
                        )
                    }
                    _ => return Err(err(pt.ty.span(), "closure buffer parameters are read-only slices `&[T]`")),
                },
                syn::Type::Path(p) => ClosureParam::Scalar(
                    p.path
                        .get_ident()
                        .and_then(|i| Scalar::parse(&i.to_string()))
                        .ok_or_else(|| err(pt.ty.span(), "closure scalar parameters are u32, i32, f32 or bool"))?,
                ),
                other => return Err(err(other.span(), "closure parameters are u32, i32, f32, bool or `&[T]`")),
            };
            params.push((pi.ident.to_string(), kind, pi.span()));
        }
        let ret = match &c.output {
            syn::ReturnType::Type(_, t) => match &**t {
                syn::Type::Path(p) => p.path.get_ident().and_then(|i| Scalar::parse(&i.to_string())),
                _ => None,
            }
            .ok_or_else(|| err(t.span(), "a closure returns u32, i32, f32 or bool"))?,
            syn::ReturnType::Default => return Err(err(c.span(), format!("{USAGE} (the result type is required)"))),
        };
        let syn::Expr::Block(b) = &*c.body else { return Err(err(c.body.span(), USAGE)) };
        let mut stmts = b.block.stmts.clone();
        let tail = match stmts.pop() {
            Some(syn::Stmt::Expr(e, None)) => e,
            _ => return Err(err(b.span(), "a closure body ends with its value (an expression without `;`)")),
        };
        self.closures.push(Closure { name: name.to_string(), params, ret, stmts, tail });
        Ok(())
    }

    /// The closure named `name` when its body is a single expression (callable anywhere).
    pub fn expression_closure(&self, name: &str) -> Option<usize> {
        self.closures.iter().rposition(|k| k.name == name).filter(|&i| self.closures[i].stmts.is_empty())
    }

    /// Checks a call of closure `index` and lowers its arguments in the caller's scope:
    /// the closure, its buffer parameters bound to kernel buffers, and its scalar
    /// parameters with their argument expressions, in order.
    fn arguments(&mut self, index: usize, call: &syn::ExprCall) -> syn::Result<Arguments> {
        let k = self.closures[index].clone();
        let span = call.span();
        if self.inlining.contains(&index) {
            return Err(err(span, format!("closure `{}` calls itself; kernel closures cannot recurse", k.name)));
        }
        if call.args.len() != k.params.len() {
            return Err(err(span, format!("closure `{}` takes {} arguments, {} given", k.name, k.params.len(), call.args.len())));
        }
        let mut buffers: HashMap<String, Name> = HashMap::new();
        let mut scalars = Vec::new();
        for ((pname, kind, _), arg) in k.params.iter().zip(&call.args) {
            match kind {
                ClosureParam::Scalar(t) => {
                    let v = self.expr(arg, Some(*t))?;
                    if v.ty != *t {
                        return Err(err(arg.span(), format!("closure `{}`: `{pname}` is {t}, the argument is {}", k.name, v.ty)));
                    }
                    scalars.push((pname.clone(), *t, v));
                }
                ClosureParam::Buffer(elem) => {
                    let pid = self.buffer_argument(&k.name, pname, *elem, arg)?;
                    buffers.insert(pname.clone(), Name::Param(pid));
                }
            }
        }
        Ok((k, buffers, scalars))
    }

    /// Inlines a call of an expression closure in place: each parameter stands for its
    /// argument's expression (pure, so evaluating it where the parameter appears means
    /// what the call means), the body is lowered in the closure's own scope.
    pub fn inline_expression(&mut self, index: usize, call: &syn::ExprCall) -> syn::Result<Expr> {
        let (k, mut scope, scalars) = self.arguments(index, call)?;
        let mark = self.substitutions.len();
        for (pname, _, v) in scalars {
            scope.insert(pname, Name::Argument(self.substitutions.len() as u32));
            self.substitutions.push(v);
        }
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        self.inlining.push(index);
        let value = self.expr(&k.tail, Some(k.ret));
        self.inlining.pop();
        self.scopes = saved_scopes;
        self.substitutions.truncate(mark);
        let value = value?;
        if value.ty != k.ret {
            return Err(err(k.tail.span(), format!("closure `{}` returns {}, its value is {}", k.name, k.ret, value.ty)));
        }
        Ok(value)
    }

    /// The kernel buffer an argument names, checked against the parameter's type.
    fn buffer_argument(&self, closure: &str, pname: &str, elem: StorageType, arg: &syn::Expr) -> syn::Result<onekernel_dsl::ir::ParamId> {
        let bname = match arg {
            syn::Expr::Path(p) => p.path.get_ident().map(|i| i.to_string()),
            _ => None,
        };
        let found = bname.as_deref().and_then(|n| self.lookup(n));
        let Some(Name::Param(pid)) = found else {
            return Err(err(arg.span(), format!("closure `{closure}`: `{pname}` takes a buffer parameter of the kernel by name")));
        };
        match self.params[pid.0 as usize].kind {
            ParamKind::Buffer { elem: have, .. } if have == elem => Ok(pid),
            ParamKind::Buffer { elem: have, .. } => {
                Err(err(arg.span(), format!("closure `{closure}`: `{pname}` is &[{}], the buffer holds {}", elem.name(), have.name())))
            }
            _ => Err(err(arg.span(), format!("closure `{closure}`: `{pname}` takes a buffer parameter of the kernel by name"))),
        }
    }

    /// Inlines a call of closure `index`; the statements go to `out`, the value (a read
    /// of a fresh local) is returned.
    pub fn inline_call(&mut self, index: usize, call: &syn::ExprCall, out: &mut Vec<Stmt>) -> syn::Result<Expr> {
        let span = call.span();
        // Arguments are evaluated in the caller's scope, before the body's scope exists.
        let (k, scope, values) = self.arguments(index, call)?;
        let ret = self.declare_local(&format!("{}_value", k.name), VarType::Scalar(k.ret), true);
        self.push(out, StmtKind::Let { var: ret, init: None }, span);
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![scope]);
        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        self.inlining.push(index);
        self.depth += 1;
        let body = self.closure_body(&k, values, ret, out);
        self.depth -= 1;
        self.inlining.pop();
        self.loop_depth = saved_loops;
        self.scopes = saved_scopes;
        body?;
        Ok(self.mk(ExprKind::Var(ret), k.ret, span))
    }

    fn closure_body(
        &mut self,
        k: &Closure,
        values: Vec<(String, Scalar, Expr)>,
        ret: onekernel_dsl::ir::VarId,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        for ((name, t, v), (_, _, pspan)) in values.into_iter().zip(k.params.iter().filter(|p| matches!(p.1, ClosureParam::Scalar(_)))) {
            let var = self.declare_local(&name, VarType::Scalar(t), false);
            self.push(out, StmtKind::Let { var, init: Some(onekernel_dsl::ir::Init::Value(v)) }, *pspan);
        }
        for s in &k.stmts {
            self.stmt(s, out)?;
        }
        let value = self.expr(&k.tail, Some(k.ret))?;
        if value.ty != k.ret {
            return Err(err(k.tail.span(), format!("closure `{}` returns {}, its value is {}", k.name, k.ret, value.ty)));
        }
        self.push(out, StmtKind::Assign { var: ret, value }, k.tail.span());
        Ok(())
    }
}
