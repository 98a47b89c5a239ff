//! Statements: `let` (scalars, arrays, shared arrays, reductions), assignment and
//! compound assignment, stores, `if`, `for`, `while`, `break`, `continue`, `return`,
//! `barrier()`, the asynchronous copies (`async_copy`, `async_commit`, `async_wait`) and
//! plain blocks.

use super::closure::closure_call;
use super::expr::{compound_op, is_untyped_literal};
use super::{err, Lowerer, Name};
use onekernel_dsl::ir::{async_copy_name, ArrayInit, Init, Place, ReduceOp, SharedDecl, Stmt, StmtKind};
use onekernel_dsl::types::{Scalar, VarType};
use proc_macro2::Span;
use syn::spanned::Spanned;

fn reduce_op(e: &syn::Expr) -> Option<(ReduceOp, &syn::Expr)> {
    let syn::Expr::Call(c) = e else { return None };
    let syn::Expr::Path(p) = &*c.func else { return None };
    let op = match p.path.get_ident()?.to_string().as_str() {
        "workgroup_sum" => ReduceOp::Sum,
        "workgroup_max" => ReduceOp::Max,
        "workgroup_min" => ReduceOp::Min,
        _ => return None,
    };
    (c.args.len() == 1).then(|| (op, &c.args[0]))
}

pub(super) fn is_call_to(e: &syn::Expr, name: &str) -> bool {
    match e {
        syn::Expr::Call(c) => matches!(&*c.func, syn::Expr::Path(p) if p.path.segments.last().is_some_and(|s| s.ident == name)),
        _ => false,
    }
}

fn int_literal(e: &syn::Expr) -> Option<u32> {
    match e {
        syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. }) => i.base10_parse().ok(),
        _ => None,
    }
}

/// Why an attribute on a statement is rejected.
const STATEMENT_ATTRIBUTES: &str = "statements take no attributes (a `for` loop takes `#[peel_single_trip]`)";

impl Lowerer {
    pub(super) fn push(&mut self, out: &mut Vec<Stmt>, kind: StmtKind, span: Span) {
        let span = self.span_id(span);
        out.push(Stmt { kind, span });
    }

    pub(super) fn stmt(&mut self, s: &syn::Stmt, out: &mut Vec<Stmt>) -> syn::Result<()> {
        // Attributes mean nothing on a statement, except `#[peel_single_trip]` on a `for`
        // (checked there): rejected rather than ignored.
        let attributed =
            |tokens: proc_macro2::TokenStream| matches!(tokens.into_iter().next(), Some(proc_macro2::TokenTree::Punct(p)) if p.as_char() == '#');
        match s {
            syn::Stmt::Local(l) if !l.attrs.is_empty() => Err(err(l.attrs[0].span(), STATEMENT_ATTRIBUTES)),
            syn::Stmt::Expr(e, _) if !matches!(e, syn::Expr::ForLoop(_)) && attributed(quote::ToTokens::to_token_stream(e)) => {
                Err(err(e.span(), STATEMENT_ATTRIBUTES))
            }
            syn::Stmt::Local(l) => self.local(l, out),
            syn::Stmt::Expr(e, _) => self.expr_stmt(e, out),
            syn::Stmt::Item(i) => Err(err(i.span(), "items (fn, const, struct, use …) cannot be declared inside a kernel; use `let`")),
            syn::Stmt::Macro(m) => Err(err(m.span(), "macros are not supported in kernel bodies")),
        }
    }

    fn local(&mut self, l: &syn::Local, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let span = l.span();
        if let syn::Pat::Tuple(t) = &l.pat {
            return self.pair_reduction(t, l, out);
        }
        let (ident, mutable, annotated) = match &l.pat {
            syn::Pat::Ident(pi) => (&pi.ident, pi.mutability.is_some(), None),
            syn::Pat::Type(pt) => match &*pt.pat {
                syn::Pat::Ident(pi) => (&pi.ident, pi.mutability.is_some(), Some(&*pt.ty)),
                other => return Err(err(other.span(), "`let` binds one identifier; patterns are not supported")),
            },
            other => return Err(err(other.span(), "`let` binds one identifier; patterns are not supported")),
        };
        let name = ident.to_string();
        let declared = match annotated {
            Some(t) => Some(local_type(t)?),
            None => None,
        };
        let Some(init) = &l.init else {
            let ty = declared.ok_or_else(|| err(span, format!("`let {name};` needs a type: `let {name}: f32;`")))?;
            if matches!(ty, VarType::Array { .. }) {
                return Err(err(span, "an array needs an initializer: `[value; N]` or `[a, b, …]`"));
            }
            // Like Rust, a binding declared without a value may be assigned later; the
            // validator's definite-assignment check guards its reads.
            let var = self.declare_local(&name, ty, true);
            self.push(out, StmtKind::Let { var, init: None }, span);
            return Ok(());
        };
        if let Some((_, else_branch)) = &init.diverge {
            return Err(err(else_branch.span(), "`let … else` is not supported"));
        }
        let value = &*init.expr;
        if let syn::Expr::Closure(c) = value {
            if declared.is_some() {
                return Err(err(span, "a kernel closure takes no type annotation on its `let`"));
            }
            return self.declare_closure(&name, c, mutable, span);
        }
        if is_call_to(value, "shared") {
            return self.shared_decl(&name, value, mutable, span);
        }
        if let Some(role) = super::tile::constructor(value) {
            return self.tile_decl(&name, role, value, mutable, span);
        }
        if let syn::Expr::Repeat(r) = value {
            if let Some(role) = super::tile::constructor(&r.expr) {
                if declared.is_some() {
                    return Err(err(span, "a tile array takes no type annotation on its `let`"));
                }
                return self.tile_array_decl(&name, role, r, mutable, span);
            }
        }
        if is_call_to(value, "last_arrival") {
            return self.last_arrival(&name, value, declared, mutable, out);
        }
        if let Some((op, arg)) = reduce_op(value) {
            let hint = match declared {
                Some(VarType::Scalar(t)) => Some(t),
                _ => None,
            };
            let v = self.expr(arg, hint.or(Some(Scalar::F32)))?;
            let var = self.declare_local(&name, VarType::Scalar(hint.unwrap_or(v.ty)), mutable);
            self.push(out, StmtKind::Let { var, init: None }, span);
            self.push(out, StmtKind::Reduce { var, op, value: v, arg: None }, value.span());
            return Ok(());
        }
        match value {
            syn::Expr::Repeat(r) => {
                let len = int_literal(&r.len).ok_or_else(|| err(r.len.span(), "an array length is an integer literal"))?;
                let hint = match declared {
                    Some(VarType::Array { elem, .. }) => Some(elem),
                    _ => None,
                };
                let fill = self.expr(&r.expr, hint)?;
                let ty = VarType::Array { elem: fill.ty, len };
                self.check_declared(declared, ty, span)?;
                let var = self.declare_local(&name, ty, mutable);
                self.push(out, StmtKind::Let { var, init: Some(Init::Array(ArrayInit::Fill(fill))) }, span);
            }
            syn::Expr::Array(a) => {
                let hint = match declared {
                    Some(VarType::Array { elem, .. }) => Some(elem),
                    _ => None,
                };
                let mut elems = Vec::new();
                for e in &a.elems {
                    let hint = hint.or(elems.first().map(|x: &onekernel_dsl::ir::Expr| x.ty));
                    elems.push(self.expr(e, hint)?);
                }
                let elem = elems.first().map(|e| e.ty).ok_or_else(|| err(a.span(), "an array needs at least one element"))?;
                if let Some(bad) = elems.iter().find(|e| e.ty != elem) {
                    return Err(err(self.compiler_span(bad.span), format!("array elements must all be {elem}, found {}", bad.ty)));
                }
                let ty = VarType::Array { elem, len: elems.len() as u32 };
                self.check_declared(declared, ty, span)?;
                let var = self.declare_local(&name, ty, mutable);
                self.push(out, StmtKind::Let { var, init: Some(Init::Array(ArrayInit::Elements(elems))) }, span);
            }
            _ => {
                let hint = match declared {
                    Some(VarType::Scalar(t)) => Some(t),
                    Some(VarType::Array { .. }) => return Err(err(value.span(), "an array is initialized with `[value; N]` or `[a, b, …]`")),
                    None => None,
                };
                let v = match closure_call(self, value) {
                    Some((index, call)) => self.inline_call(index, call, out)?,
                    None => self.expr(value, hint)?,
                };
                let ty = VarType::Scalar(v.ty);
                self.check_declared(declared, ty, value.span())?;
                let var = self.declare_local(&name, ty, mutable);
                // `let mut s = 0;`: typed by the literal alone (remembered for the hint
                // where `s` then meets an f32).
                if declared.is_none() && is_untyped_literal(value) && v.ty != Scalar::F32 {
                    self.int_literal_locals.insert(var.0, value.span());
                }
                self.push(out, StmtKind::Let { var, init: Some(Init::Value(v)) }, span);
            }
        }
        Ok(())
    }

    /// `let (v, i) = workgroup_argmax(value, index);` (or `workgroup_argmin`).
    fn pair_reduction(&mut self, t: &syn::PatTuple, l: &syn::Local, out: &mut Vec<Stmt>) -> syn::Result<()> {
        const USAGE: &str = "a tuple `let` takes a pair reduction: `let (v, i) = workgroup_argmax(value, index);` (or `workgroup_argmin`)";
        let names: Vec<(String, bool)> = t
            .elems
            .iter()
            .map(|p| match p {
                syn::Pat::Ident(pi) => Ok((pi.ident.to_string(), pi.mutability.is_some())),
                other => Err(err(other.span(), USAGE)),
            })
            .collect::<syn::Result<_>>()?;
        if names.len() != 2 {
            return Err(err(t.span(), USAGE));
        }
        let Some(init) = &l.init else { return Err(err(l.span(), USAGE)) };
        let syn::Expr::Call(c) = &*init.expr else { return Err(err(init.expr.span(), USAGE)) };
        let op = match &*c.func {
            syn::Expr::Path(p) if p.path.is_ident("workgroup_argmax") => ReduceOp::Max,
            syn::Expr::Path(p) if p.path.is_ident("workgroup_argmin") => ReduceOp::Min,
            _ => return Err(err(c.func.span(), USAGE)),
        };
        if c.args.len() != 2 {
            return Err(err(c.span(), "`workgroup_argmax(value, index)` takes a value (f32, i32 or u32) and its u32 index"));
        }
        let value = self.expr(&c.args[0], Some(Scalar::F32))?;
        let index = self.expr(&c.args[1], Some(Scalar::U32))?;
        let var = self.declare_local(&names[0].0, VarType::Scalar(value.ty), names[0].1);
        let ivar = self.declare_local(&names[1].0, VarType::Scalar(Scalar::U32), names[1].1);
        self.push(out, StmtKind::Let { var, init: None }, l.span());
        self.push(out, StmtKind::Let { var: ivar, init: None }, l.span());
        let arg = Some(Box::new(onekernel_dsl::ir::ReduceArg { var: ivar, index }));
        self.push(out, StmtKind::Reduce { var, op, value, arg }, init.expr.span());
        Ok(())
    }

    fn check_declared(&self, declared: Option<VarType>, actual: VarType, span: Span) -> syn::Result<()> {
        match declared {
            Some(d) if d != actual => Err(err(span, format!("mismatched types: declared {d}, initialized with {actual}"))),
            _ => Ok(()),
        }
    }

    fn shared_decl(&mut self, name: &str, value: &syn::Expr, mutable: bool, span: Span) -> syn::Result<()> {
        if self.depth != 0 {
            return Err(err(span, "shared arrays are declared at the top level of the kernel body"));
        }
        if mutable {
            return Err(err(span, "write `let s = shared::<T, N>();` (no `mut`): shared arrays are always writable"));
        }
        let usage = "write `shared::<T, N>()` with T in f32, i32, u32 and N an integer literal or `{ expression over variant axes }`";
        let syn::Expr::Call(c) = value else { return Err(err(value.span(), usage)) };
        let syn::Expr::Path(p) = &*c.func else { return Err(err(value.span(), usage)) };
        let args = match p.path.segments.last().map(|s| &s.arguments) {
            Some(syn::PathArguments::AngleBracketed(a)) => a,
            _ => return Err(err(value.span(), usage)),
        };
        let mut it = args.args.iter();
        let elem = match it.next() {
            Some(syn::GenericArgument::Type(t)) => local_type(t).ok().and_then(|t| match t {
                VarType::Scalar(s) if s != Scalar::Bool => Some(s),
                _ => None,
            }),
            _ => None,
        };
        let (len, size) = match it.next() {
            Some(syn::GenericArgument::Const(syn::Expr::Block(b))) => match &b.block.stmts[..] {
                [syn::Stmt::Expr(e, None)] => {
                    let size = self.expr(e, Some(Scalar::U32))?;
                    (Some(self.largest_shared_len(&size, e.span())?), Some(size))
                }
                _ => return Err(err(b.span(), usage)),
            },
            Some(syn::GenericArgument::Const(e)) => (int_literal(e), None),
            _ => (None, None),
        };
        let (Some(elem), Some(len), true, true) = (elem, len, it.next().is_none(), c.args.is_empty()) else {
            return Err(err(value.span(), usage));
        };
        let span = self.span_id(span);
        self.declare_shared(SharedDecl { name: name.to_string(), elem, len, size, span });
        Ok(())
    }

    /// The largest value of a shared array's length expression over every combination of
    /// the variant axes it reads (it may read nothing else).
    fn largest_shared_len(&self, size: &onekernel_dsl::ir::Expr, span: Span) -> syn::Result<u32> {
        use onekernel_dsl::ir::{ExprKind, ParamId, ParamKind};
        use onekernel_dsl::types::Literal;
        let rule = "a shared array's length is an integer literal or an expression over variant axes \
                    (integer arithmetic, min, max, select): each variant compiles with its own length";
        onekernel_dsl::shapes::check(size).map_err(|_| err(span, rule))?;
        let mut axes: Vec<(ParamId, Vec<Literal>)> = Vec::new();
        let mut bad = false;
        onekernel_dsl::visit::walk_expr(size, &mut |x| match &x.kind {
            ExprKind::Param(p) => match &self.params[p.0 as usize].kind {
                ParamKind::Spec { values: Some(values), .. } => {
                    if !axes.iter().any(|(q, _)| q == p) {
                        axes.push((*p, values.clone()));
                    }
                }
                _ => bad = true,
            },
            ExprKind::Builtin { .. } => bad = true,
            _ => {}
        });
        if bad || size.ty != Scalar::U32 {
            return Err(err(span, rule));
        }
        let combos = axes.iter().map(|(_, v)| v.len()).product::<usize>();
        let mut largest = 0u32;
        for mut n in 0..combos {
            let mut pick: Vec<(ParamId, Literal)> = Vec::new();
            for (p, values) in &axes {
                pick.push((*p, values[n % values.len()]));
                n /= values.len();
            }
            let lookup = |q: ParamId| pick.iter().find(|(p, _)| *p == q).map(|(_, v)| *v);
            let v = onekernel_dsl::shapes::eval(size, &lookup, [1; 3], [1; 3]).map_err(|m| err(span, format!("shared array length: {m}")))?;
            let v = u32::try_from(v)
                .ok()
                .filter(|v| *v > 0)
                .ok_or_else(|| err(span, "a shared array's length must be between 1 and 2^32 − 1 in every variant"))?;
            largest = largest.max(v);
        }
        Ok(largest)
    }

    fn expr_stmt(&mut self, e: &syn::Expr, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let span = e.span();
        match e {
            syn::Expr::Assign(a) => self.assign(&a.left, &a.right, None, span, out),
            syn::Expr::Binary(b) if compound_op(&b.op).is_some() => self.assign(&b.left, &b.right, compound_op(&b.op).map(|op| (op, b.op.span())), span, out),
            syn::Expr::If(i) => {
                let s = self.if_stmt(i)?;
                out.push(s);
                Ok(())
            }
            syn::Expr::ForLoop(f) => self.for_loop(f, out),
            syn::Expr::While(w) => {
                if w.label.is_some() {
                    return Err(err(span, "loop labels are not supported"));
                }
                let cond = self.condition(&w.cond)?;
                self.loop_depth += 1;
                let body = self.block(&w.body.stmts);
                self.loop_depth -= 1;
                let body = body?;
                self.push(out, StmtKind::While { cond, body }, span);
                Ok(())
            }
            syn::Expr::Loop(_) => Err(err(span, "`loop` is not supported; write `while cond { … }` with an explicit condition")),
            syn::Expr::Break(b) => {
                if b.label.is_some() || b.expr.is_some() {
                    return Err(err(span, "`break` takes no label or value"));
                }
                if !self.inlining.is_empty() && self.loop_depth == 0 {
                    return Err(err(span, "`break` outside a loop of the closure: a closure cannot leave its caller's loop"));
                }
                self.push(out, StmtKind::Break, span);
                Ok(())
            }
            syn::Expr::Continue(c) => {
                if c.label.is_some() {
                    return Err(err(span, "`continue` takes no label"));
                }
                if !self.inlining.is_empty() && self.loop_depth == 0 {
                    return Err(err(span, "`continue` outside a loop of the closure: a closure cannot leave its caller's loop"));
                }
                self.push(out, StmtKind::Continue, span);
                Ok(())
            }
            syn::Expr::Return(r) => {
                if !self.inlining.is_empty() {
                    return Err(err(span, "`return` inside a kernel closure would leave the kernel; the closure's value is its last expression"));
                }
                if r.expr.is_some() {
                    return Err(err(span, "kernels return nothing: write `return;` and store results in a buffer"));
                }
                self.push(out, StmtKind::Return, span);
                Ok(())
            }
            syn::Expr::Call(c) if is_call_to(e, "barrier") => {
                if !c.args.is_empty() {
                    return Err(err(span, "`barrier()` takes no arguments"));
                }
                self.push(out, StmtKind::Barrier, span);
                Ok(())
            }
            syn::Expr::Call(c) if is_call_to(e, "async_copy") => self.async_copy(c, false, out),
            syn::Expr::Call(c) if is_call_to(e, "async_copy_bypass_l1") => self.async_copy(c, true, out),
            syn::Expr::Call(c) if is_call_to(e, "load_words") => self.load_words(c, out),
            syn::Expr::Call(c) if is_call_to(e, "store_words") => self.store_words(c, out),
            syn::Expr::Call(c) if super::tile::is_operation(e) => self.tile_op(c, out),
            syn::Expr::Call(c) if is_call_to(e, "async_commit") => {
                if !c.args.is_empty() {
                    return Err(err(span, "`async_commit()` takes no arguments"));
                }
                self.push(out, StmtKind::AsyncCommit, span);
                Ok(())
            }
            syn::Expr::Call(c) if is_call_to(e, "async_wait") => {
                let usage = "`async_wait(n)` takes one integer literal: the copy groups that may stay in flight";
                let [arg] = c.args.iter().collect::<Vec<_>>()[..] else { return Err(err(span, usage)) };
                let pending = int_literal(arg).ok_or_else(|| err(arg.span(), usage))?;
                self.push(out, StmtKind::AsyncWait { pending }, span);
                Ok(())
            }
            syn::Expr::Block(b) => {
                let stmts = self.block(&b.block.stmts)?;
                out.extend(stmts);
                Ok(())
            }
            syn::Expr::Match(_) => Err(err(span, "`match` is not supported; use `if` / `else if`")),
            syn::Expr::Macro(_) => Err(err(span, "macros are not supported in kernel bodies")),
            _ => Err(err(span, "this expression does nothing as a statement; statements are `let`, assignments, stores, `if`, `for`, `while`, `break`, `continue`, `return`, `barrier()`, `load_words`, `store_words`, the `tile_*` operations and the `async_*` copies")),
        }
    }

    fn condition(&mut self, c: &syn::Expr) -> syn::Result<onekernel_dsl::ir::Expr> {
        if let syn::Expr::Let(l) = c {
            return Err(err(l.span(), "`if let` / `while let` are not supported"));
        }
        let cond = self.expr(c, Some(Scalar::Bool))?;
        if cond.ty != Scalar::Bool {
            return Err(err(c.span(), format!("a condition must be bool, found {}; compare explicitly (`x != 0`)", cond.ty)));
        }
        Ok(cond)
    }

    fn if_stmt(&mut self, i: &syn::ExprIf) -> syn::Result<Stmt> {
        let span = i.span();
        let cond = self.condition(&i.cond)?;
        let then_body = self.block(&i.then_branch.stmts)?;
        let else_body = match &i.else_branch {
            None => Vec::new(),
            Some((_, e)) => match &**e {
                syn::Expr::If(nested) => vec![self.if_stmt(nested)?],
                syn::Expr::Block(b) => self.block(&b.block.stmts)?,
                other => return Err(err(other.span(), "expected a block or `else if`")),
            },
        };
        let span = self.span_id(span);
        Ok(Stmt { kind: StmtKind::If { cond, then_body, else_body }, span })
    }

    fn assign(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        op: Option<(onekernel_dsl::ir::BinaryOp, Span)>,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        match left {
            syn::Expr::Path(p) => {
                let name = p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
                let var = match self.lookup(&name) {
                    Some(Name::Local(v)) => v,
                    Some(Name::Param(_)) => return Err(err(left.span(), format!("cannot assign to parameter `{name}`; copy it into a `let mut`"))),
                    Some(Name::Shared(_)) => {
                        return Err(err(left.span(), format!("cannot assign to shared array `{name}`; store into its elements")))
                    }
                    Some(Name::Tile(_)) => return Err(err(left.span(), format!("cannot assign to tile `{name}`; use `tile_*` operations"))),
                    Some(Name::TileArray { .. }) => {
                        return Err(err(left.span(), format!("cannot assign to tile array `{name}`; use `tile_*` operations on its elements")))
                    }
                    Some(Name::Counter(_)) => return Err(err(left.span(), format!("cannot assign to loop counter `{name}`"))),
                    Some(Name::Argument(_)) => {
                        return Err(err(left.span(), format!("cannot assign to closure parameter `{name}`; copy it into a `let mut`")))
                    }
                    None => return Err(err(left.span(), self.unknown_name(&name))),
                };
                let VarType::Scalar(ty) = self.locals[var.0 as usize].ty else {
                    return Err(err(left.span(), format!("cannot assign a whole array `{name}`; assign its elements")));
                };
                if !self.locals[var.0 as usize].mutable {
                    return Err(err(left.span(), format!("cannot assign twice to immutable variable `{name}`; declare it `let mut {name}`")));
                }
                if op.is_none() {
                    if let Some((rop, arg)) = reduce_op(right) {
                        let v = self.expr(arg, Some(ty))?;
                        self.push(out, StmtKind::Reduce { var, op: rop, value: v, arg: None }, span);
                        return Ok(());
                    }
                }
                let value = match (op, closure_call(self, right)) {
                    (None, Some((index, call))) => self.inline_call(index, call, out)?,
                    (None, None) => self.expr(right, Some(ty))?,
                    (Some((bop, op_span)), _) => self.binary(bop, left, right, Some(ty), span, op_span)?,
                };
                if value.ty != ty {
                    return Err(err(right.span(), format!("mismatched types: `{name}` is {ty}, the value is {}", value.ty)));
                }
                self.push(out, StmtKind::Assign { var, value }, span);
                Ok(())
            }
            syn::Expr::Index(ix) => {
                let place = self.place(&ix.expr)?;
                let elem = self.place_elem(place);
                let index = self.index_expr(&ix.index)?;
                let value = match op {
                    None => self.expr(right, Some(elem))?,
                    Some((bop, op_span)) => self.binary(bop, left, right, Some(elem), span, op_span)?,
                };
                if value.ty != elem {
                    return Err(err(right.span(), format!("mismatched types: elements are {elem}, the value is {}", value.ty)));
                }
                if let onekernel_dsl::ir::Place::Buffer(p) = place {
                    if matches!(
                        self.params[p.0 as usize].kind,
                        onekernel_dsl::ir::ParamKind::Buffer { access: onekernel_dsl::ir::Access::ReadOnly, .. }
                    ) {
                        let name = &self.params[p.0 as usize].name;
                        return Err(err(ix.expr.span(), format!("cannot store into `{name}`: it is read-only; declare it `&mut [T]`")));
                    }
                }
                if let onekernel_dsl::ir::Place::Local(v) = place {
                    if !self.locals[v.0 as usize].mutable {
                        let name = &self.locals[v.0 as usize].name;
                        return Err(err(ix.expr.span(), format!("cannot store into immutable array `{name}`; declare it `let mut {name}`")));
                    }
                }
                self.push(out, StmtKind::Store { place, index, value }, span);
                Ok(())
            }
            _ => Err(err(left.span(), "the left side of an assignment is a variable or `buffer[index]`")),
        }
    }

    /// `let last = last_arrival(counters, index, count);`: a buffer parameter and two u32
    /// values; the result is a bool.
    fn last_arrival(&mut self, name: &str, value: &syn::Expr, declared: Option<VarType>, mutable: bool, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let usage = "`let last = last_arrival(counters, index, count);` arrives at counter `index` of the `&mut [u32]` buffer `counters`, which `count` workgroups reach";
        let syn::Expr::Call(c) = value else { return Err(err(value.span(), usage)) };
        let [counters, index, count] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(err(c.span(), usage));
        };
        let Place::Buffer(counters_id) = self.place(counters)? else {
            return Err(err(counters.span(), "the counters of `last_arrival` are a `&mut [u32]` buffer parameter"));
        };
        let index = self.index_u32(index, "last_arrival")?;
        let count = self.index_u32(count, "last_arrival")?;
        if let Some(t) = declared.filter(|t| *t != VarType::Scalar(Scalar::Bool)) {
            return Err(err(value.span(), format!("`last_arrival` yields bool, but `{name}` is declared {t}")));
        }
        let var = self.declare_local(name, VarType::Scalar(Scalar::Bool), mutable);
        let span = value.span();
        self.push(out, StmtKind::Let { var, init: None }, span);
        self.push(out, StmtKind::Arrive { var, counters: counters_id, index, count }, span);
        Ok(())
    }

    /// `async_copy(dst, dst_index, src, src_index, words)`: a shared array, a buffer, and
    /// the element count as a literal; `async_copy_bypass_l1` (`bypass_l1`) the same, of
    /// 4 elements.
    fn async_copy(&mut self, c: &syn::ExprCall, bypass_l1: bool, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let what = async_copy_name(bypass_l1);
        let usage = if bypass_l1 {
            "`async_copy_bypass_l1(shared_array, index, buffer, index, 4)` copies 4 elements (16 bytes) past L1"
        } else {
            "`async_copy(shared_array, index, buffer, index, words)` copies 1, 2 or 4 elements"
        };
        let t = self.transfer_args(c, what, usage)?;
        let Place::Shared(dst) = t.dst else {
            return Err(err(t.dst_expr.span(), format!("the destination of `{what}` is a shared array")));
        };
        let Place::Buffer(src) = t.src else {
            return Err(err(t.src_expr.span(), format!("the source of `{what}` is a buffer parameter")));
        };
        let (dst_index, src_index, words) = (t.dst_index, t.src_index, t.words);
        self.push(out, StmtKind::AsyncCopy { dst, dst_index, src, src_index, words, bypass_l1 }, c.span());
        Ok(())
    }

    /// `load_words(dst, dst_index, src, src_index, words)`: a mutable local array, a
    /// read-only buffer or a shared array, and the element count as a literal.
    fn load_words(&mut self, c: &syn::ExprCall, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let usage = "`load_words(local_array, index, buffer_or_shared_array, index, words)` loads 2 or 4 elements";
        let t = self.transfer_args(c, "load_words", usage)?;
        let Place::Local(dst) = t.dst else {
            return Err(err(t.dst_expr.span(), "the destination of `load_words` is a local array"));
        };
        if !self.locals[dst.0 as usize].mutable {
            let name = &self.locals[dst.0 as usize].name;
            return Err(err(t.dst_expr.span(), format!("cannot load into immutable array `{name}`; declare it `let mut {name}`")));
        }
        if matches!(t.src, Place::Local(_)) {
            return Err(err(t.src_expr.span(), "the source of `load_words` is a buffer parameter or a shared array"));
        }
        let (dst_index, src, src_index, words) = (t.dst_index, t.src, t.src_index, t.words);
        self.push(out, StmtKind::LoadWords { dst, dst_index, src, src_index, words }, c.span());
        Ok(())
    }

    /// `store_words(dst, dst_index, src, src_index, words)`: a buffer parameter, a local
    /// array, and the element count as a literal.
    fn store_words(&mut self, c: &syn::ExprCall, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let usage = "`store_words(buffer, index, local_array, index, words)` stores 2 or 4 elements";
        let t = self.transfer_args(c, "store_words", usage)?;
        let Place::Buffer(dst) = t.dst else {
            return Err(err(t.dst_expr.span(), "the destination of `store_words` is a buffer parameter"));
        };
        let Place::Local(src) = t.src else {
            return Err(err(t.src_expr.span(), "the source of `store_words` is a local array"));
        };
        let (dst_index, src_index, words) = (t.dst_index, t.src_index, t.words);
        self.push(out, StmtKind::StoreWords { dst, dst_index, src, src_index, words }, c.span());
        Ok(())
    }

    /// The five arguments every transfer (`async_copy`, `load_words`, `store_words`) takes:
    /// destination, its u32 index, source, its u32 index, and the element count as a
    /// literal. The kinds of destination and source are the caller's to check.
    fn transfer_args<'c>(&mut self, c: &'c syn::ExprCall, what: &str, usage: &str) -> syn::Result<Transfer<'c>> {
        let [dst_expr, dst_index, src, src_index, words] = c.args.iter().collect::<Vec<_>>()[..] else {
            return Err(err(c.span(), usage));
        };
        let dst = self.place(dst_expr)?;
        let src_place = self.place(src)?;
        let dst_index = self.index_u32(dst_index, what)?;
        let src_index = self.index_u32(src_index, what)?;
        let words = int_literal(words).ok_or_else(|| err(words.span(), usage))?;
        Ok(Transfer { dst, dst_expr, dst_index, src: src_place, src_expr: src, src_index, words })
    }

    pub(super) fn index_u32(&mut self, e: &syn::Expr, what: &str) -> syn::Result<onekernel_dsl::ir::Expr> {
        let v = self.expr(e, Some(Scalar::U32))?;
        if v.ty != Scalar::U32 {
            return Err(err(e.span(), format!("`{what}` takes u32 indices, found {}", v.ty)));
        }
        Ok(v)
    }

    fn for_loop(&mut self, f: &syn::ExprForLoop, out: &mut Vec<Stmt>) -> syn::Result<()> {
        let span = f.span();
        if f.label.is_some() {
            return Err(err(span, "loop labels are not supported"));
        }
        // The one loop attribute: `#[peel_single_trip]` (docs/DSL.md, "Control flow").
        let mut peel = false;
        for a in &f.attrs {
            if a.path().is_ident("peel_single_trip") && matches!(a.meta, syn::Meta::Path(_)) {
                peel = true;
            } else {
                return Err(err(a.span(), "the only attribute a `for` loop takes is `#[peel_single_trip]`"));
            }
        }
        let syn::Pat::Ident(pi) = &*f.pat else {
            return Err(err(f.pat.span(), "the loop variable is one identifier"));
        };
        let usage = "a `for` loop iterates `a..b` or `(a..b).step_by(s)`";
        let (range, step) = match &*f.expr {
            syn::Expr::Range(r) => (r, None),
            syn::Expr::MethodCall(m) if m.method == "step_by" && m.args.len() == 1 => {
                let mut recv = &*m.receiver;
                while let syn::Expr::Paren(p) = recv {
                    recv = &p.expr;
                }
                match recv {
                    syn::Expr::Range(r) => (r, Some(&m.args[0])),
                    _ => return Err(err(m.receiver.span(), usage)),
                }
            }
            other => return Err(err(other.span(), usage)),
        };
        if matches!(range.limits, syn::RangeLimits::Closed(_)) {
            return Err(err(range.span(), "inclusive ranges `a..=b` are not supported; write `a..b + 1`"));
        }
        let (Some(start), Some(end)) = (&range.start, &range.end) else {
            return Err(err(range.span(), "a `for` range needs both bounds: `a..b`"));
        };
        // The counter takes the type of whichever bound is typed (u32 by default).
        let (start, end) = if is_untyped_literal(start) && !is_untyped_literal(end) {
            let e = self.expr(end, None)?;
            (self.expr(start, Some(e.ty))?, e)
        } else {
            let s = self.expr(start, None)?;
            let e = self.expr(end, Some(s.ty))?;
            (s, e)
        };
        if start.ty != end.ty || !start.ty.is_int() {
            return Err(err(range.span(), format!("range bounds must be two u32 or two i32, found {} and {}", start.ty, end.ty)));
        }
        let ty = start.ty;
        let step = match step {
            Some(s) => self.expr(s, Some(ty))?,
            None => {
                let one = if ty == Scalar::I32 { onekernel_dsl::types::Literal::I32(1) } else { onekernel_dsl::types::Literal::U32(1) };
                self.mk(onekernel_dsl::ir::ExprKind::Lit(one), ty, range.span())
            }
        };
        if step.ty != ty {
            return Err(err(self.compiler_span(step.span), format!("the step must be {ty} like the range, found {}", step.ty)));
        }
        let counter = pi.ident.to_string();
        if self.indexes_tile_array(quote::ToTokens::to_token_stream(&f.body), &counter) {
            return self.unrolled_loop(f, &counter, [&start, &end, &step], peel, out);
        }
        self.scopes.push(Default::default());
        let var = self.declare_local(&counter, VarType::Scalar(ty), false);
        self.loop_depth += 1;
        let body = self.block(&f.body.stmts);
        self.loop_depth -= 1;
        self.scopes.pop();
        let body = body?;
        self.push(out, StmtKind::For { var, start, end, step, body, peel }, span);
        Ok(())
    }
}

impl Lowerer {
    /// Whether `tokens` index a tile array by an expression of `counter` (`o[counter]`,
    /// `o[2 * counter + 1]`), looked for in nested blocks too.
    fn indexes_tile_array(&self, tokens: proc_macro2::TokenStream, counter: &str) -> bool {
        use proc_macro2::{Delimiter, TokenTree};
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let names_counter = |t: &TokenTree| matches!(t, TokenTree::Ident(i) if i == counter);
        tokens.iter().enumerate().any(|(i, t)| match t {
            TokenTree::Ident(id) => {
                matches!(self.lookup(&id.to_string()), Some(Name::TileArray { .. }))
                    && matches!(tokens.get(i + 1), Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Bracket
                        && has_token(g.stream(), &names_counter))
            }
            TokenTree::Group(g) => self.indexes_tile_array(g.stream(), counter),
            _ => false,
        })
    }

    /// A `for` loop whose counter indexes a tile array, unrolled: tiles are registers, so
    /// each element a statement names must be known where it is lowered. Its bounds and
    /// step are literals; each copy of the body sees the counter as its value's literal
    /// (docs/DSL.md, "Tile arrays").
    fn unrolled_loop(
        &mut self,
        f: &syn::ExprForLoop,
        counter: &str,
        [start, end, step]: [&onekernel_dsl::ir::Expr; 3],
        peel: bool,
        out: &mut Vec<Stmt>,
    ) -> syn::Result<()> {
        use onekernel_dsl::ir::ExprKind;
        use onekernel_dsl::types::Literal;
        let why = format!("`{counter}` indexes a tile array, so the macro unrolls this loop");
        if peel {
            return Err(err(f.span(), format!("{why}; it takes no `#[peel_single_trip]`")));
        }
        let value = super::tile::int_literal_value;
        let (Some(a), Some(b), Some(d)) = (value(start), value(end), value(step)) else {
            return Err(err(f.expr.span(), format!("{why}: its bounds and step are integer literals")));
        };
        if d <= 0 {
            return Err(err(f.expr.span(), format!("{why}: its step is positive")));
        }
        // Each copy is the whole body again: a bound on what one loop may add to a kernel.
        const MAX_COPIES: i64 = 256;
        if (b - a).max(0) > MAX_COPIES * d {
            return Err(err(f.expr.span(), format!("{why}: it makes at most {MAX_COPIES} copies of its body")));
        }
        let stops = |t: &proc_macro2::TokenTree| matches!(t, proc_macro2::TokenTree::Ident(i) if i == "break" || i == "continue");
        if has_token(quote::ToTokens::to_token_stream(&f.body), &stops) {
            return Err(err(f.body.span(), format!("{why}; its body takes no `break` or `continue`")));
        }
        let ty = start.ty;
        let mut i = a;
        while i < b {
            let lit = if ty == Scalar::I32 { Literal::I32(i as i32) } else { Literal::U32(i as u32) };
            let value = self.mk(ExprKind::Lit(lit), ty, f.pat.span());
            let mut scope = std::collections::HashMap::new();
            scope.insert(counter.to_string(), Name::Counter(self.substitutions.len() as u32));
            self.substitutions.push(value);
            self.scopes.push(scope);
            let body = self.block(&f.body.stmts);
            self.scopes.pop();
            self.substitutions.pop();
            out.extend(body?);
            i += d;
        }
        Ok(())
    }
}

/// Whether a token stream holds a token `pick` accepts, in nested groups too.
fn has_token(tokens: proc_macro2::TokenStream, pick: &dyn Fn(&proc_macro2::TokenTree) -> bool) -> bool {
    tokens.into_iter().any(|t| match &t {
        proc_macro2::TokenTree::Group(g) => has_token(g.stream(), pick),
        other => pick(other),
    })
}

/// A local's declared type: a scalar or `[T; N]`.
fn local_type(t: &syn::Type) -> syn::Result<VarType> {
    match t {
        syn::Type::Path(p) => p
            .path
            .get_ident()
            .and_then(|i| Scalar::parse(&i.to_string()))
            .map(VarType::Scalar)
            .ok_or_else(|| err(t.span(), "local variables are u32, i32, f32, bool or arrays `[T; N]` of those")),
        syn::Type::Array(a) => {
            let VarType::Scalar(elem) = local_type(&a.elem)? else {
                return Err(err(a.elem.span(), "arrays of arrays are not supported"));
            };
            let len = int_literal(&a.len).ok_or_else(|| err(a.len.span(), "an array length is an integer literal"))?;
            Ok(VarType::Array { elem, len })
        }
        _ => Err(err(t.span(), "local variables are u32, i32, f32, bool or arrays `[T; N]` of those")),
    }
}

/// The lowered arguments of a buffer transfer (see `Lowerer::transfer_args`).
struct Transfer<'c> {
    dst: Place,
    dst_expr: &'c syn::Expr,
    dst_index: onekernel_dsl::ir::Expr,
    src: Place,
    src_expr: &'c syn::Expr,
    src_index: onekernel_dsl::ir::Expr,
    words: u32,
}
