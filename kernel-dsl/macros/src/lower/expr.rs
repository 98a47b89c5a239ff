//! Expressions: literals and their inference, names, operators, casts, indexing,
//! built-in ids, intrinsics, library calls and the Rust-style method forms.

use super::{err, Lowerer, Name};
use onekernel_dsl::ir::{BinaryOp, Builtin, Expr, ExprKind, Intrinsic, ParamKind, Place, UnaryOp};
use onekernel_dsl::mathlib;
use onekernel_dsl::types::{Literal, Scalar, VarType};
use onekernel_dsl::typing;
use proc_macro2::Span;
use syn::spanned::Spanned;

/// Rust `f32` methods that map onto library functions.
const METHOD_FUNCTIONS: &[(&str, &str)] =
    &[("exp", "exp"), ("exp2", "exp2"), ("ln", "log"), ("log2", "log2"), ("ln_1p", "log1p"), ("sqrt", "sqrt"), ("recip", "recip"), ("tanh", "tanh")];

const METHODS: &str = "to_bits, min, max, clamp, abs, mul_add, count_ones, exp, exp2, ln, log2, ln_1p, sqrt, recip, tanh";

fn builtin_of(name: &str) -> Option<Builtin> {
    Some(match name {
        "local_id" => Builtin::LocalId,
        "group_id" => Builtin::GroupId,
        "global_id" => Builtin::GlobalId,
        "num_groups" => Builtin::NumGroups,
        _ => return None,
    })
}

/// Whether `e` is a literal whose type comes from its context.
pub fn is_untyped_literal(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Lit(l) => match &l.lit {
            syn::Lit::Int(i) => i.suffix().is_empty(),
            syn::Lit::Float(f) => f.suffix().is_empty(),
            _ => false,
        },
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Neg(_)) => is_untyped_literal(&u.expr),
        syn::Expr::Paren(p) => is_untyped_literal(&p.expr),
        _ => false,
    }
}

fn binary_op(op: &syn::BinOp) -> Option<BinaryOp> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) | B::AddAssign(_) => BinaryOp::Add,
        B::Sub(_) | B::SubAssign(_) => BinaryOp::Sub,
        B::Mul(_) | B::MulAssign(_) => BinaryOp::Mul,
        B::Div(_) | B::DivAssign(_) => BinaryOp::Div,
        B::Rem(_) | B::RemAssign(_) => BinaryOp::Rem,
        B::BitAnd(_) | B::BitAndAssign(_) => BinaryOp::BitAnd,
        B::BitOr(_) | B::BitOrAssign(_) => BinaryOp::BitOr,
        B::BitXor(_) | B::BitXorAssign(_) => BinaryOp::BitXor,
        B::Shl(_) | B::ShlAssign(_) => BinaryOp::Shl,
        B::Shr(_) | B::ShrAssign(_) => BinaryOp::Shr,
        B::Eq(_) => BinaryOp::Eq,
        B::Ne(_) => BinaryOp::Ne,
        B::Lt(_) => BinaryOp::Lt,
        B::Le(_) => BinaryOp::Le,
        B::Gt(_) => BinaryOp::Gt,
        B::Ge(_) => BinaryOp::Ge,
        B::And(_) => BinaryOp::And,
        B::Or(_) => BinaryOp::Or,
        _ => return None,
    })
}

/// The compound-assignment operator of `a op= b`, if it is one.
pub fn compound_op(op: &syn::BinOp) -> Option<BinaryOp> {
    use syn::BinOp as B;
    match op {
        B::AddAssign(_)
        | B::SubAssign(_)
        | B::MulAssign(_)
        | B::DivAssign(_)
        | B::RemAssign(_)
        | B::BitAndAssign(_)
        | B::BitOrAssign(_)
        | B::BitXorAssign(_)
        | B::ShlAssign(_)
        | B::ShrAssign(_) => binary_op(op),
        _ => None,
    }
}

impl Lowerer {
    pub fn mk(&mut self, kind: ExprKind, ty: Scalar, span: Span) -> Expr {
        let span = self.span_id(span);
        Expr { kind, ty, span }
    }

    /// Lowers an expression; `expected` guides untyped literals only.
    pub fn expr(&mut self, e: &syn::Expr, expected: Option<Scalar>) -> syn::Result<Expr> {
        use syn::Expr as E;
        let span = e.span();
        match e {
            E::Lit(l) => self.literal(&l.lit, false, expected, span),
            E::Paren(p) => self.expr(&p.expr, expected),
            E::Group(g) => self.expr(&g.expr, expected),
            E::Path(p) => self.path(p, span),
            E::Unary(u) => self.unary(u, expected),
            E::Binary(b) => {
                if compound_op(&b.op).is_some() {
                    return Err(err(span, "compound assignment (`+=` …) is a statement, not a value"));
                }
                let Some(op) = binary_op(&b.op) else {
                    return Err(err(b.op.span(), "unsupported operator"));
                };
                self.binary(op, &b.left, &b.right, expected, span, b.op.span())
            }
            E::Cast(c) => {
                let to = match &*c.ty {
                    syn::Type::Path(p) => p.path.get_ident().and_then(|i| Scalar::parse(&i.to_string())),
                    _ => None,
                };
                let to = to.ok_or_else(|| err(c.ty.span(), "`as` converts to u32, i32, f32 (or from bool to an integer)"))?;
                let inner = self.expr(&c.expr, None)?;
                typing::cast_allowed(inner.ty, to).map_err(|m| err(span, m))?;
                Ok(self.mk(ExprKind::Cast(Box::new(inner)), to, span))
            }
            E::Index(ix) => {
                let place = self.place(&ix.expr)?;
                let index = self.index_expr(&ix.index)?;
                let ty = self.place_elem(place);
                Ok(self.mk(ExprKind::Index { place, index: Box::new(index) }, ty, span))
            }
            E::Call(c) => self.call(c, expected),
            E::MethodCall(m) => self.method(m),
            E::Field(f) => self.field(f),
            E::If(_) => Err(err(span, "`if` is a statement in the DSL, not a value; use `select(cond, a, b)`")),
            E::Match(_) => Err(err(span, "`match` is not supported; use `if` / `else if`")),
            E::Closure(_) => Err(err(span, "a closure is declared as `let name = |a: u32| -> f32 { … };` at the top level of the kernel body")),
            E::Macro(_) => Err(err(span, "macros are not supported in kernel bodies")),
            E::Reference(_) => Err(err(span, "references are not supported; index buffers directly")),
            E::Block(_) | E::Unsafe(_) => Err(err(span, "a block is not a value in the DSL; use `let` statements")),
            E::Range(_) => Err(err(span, "ranges are only allowed as the iterator of a `for` loop")),
            E::Tuple(_) => Err(err(span, "tuples are not supported; use separate variables")),
            E::Array(_) | E::Repeat(_) => Err(err(span, "array literals only initialize a `let` binding")),
            E::Assign(_) => Err(err(span, "assignment is a statement, not a value")),
            _ => Err(err(span, "this expression is not part of the DSL")),
        }
    }

    fn literal(&mut self, lit: &syn::Lit, neg: bool, expected: Option<Scalar>, span: Span) -> syn::Result<Expr> {
        let v = match lit {
            syn::Lit::Bool(b) => Literal::Bool(b.value),
            syn::Lit::Int(i) => {
                let ty = match i.suffix() {
                    "u32" => Scalar::U32,
                    "i32" => Scalar::I32,
                    "" => match expected {
                        Some(Scalar::F32) => return Err(err(span, "expected f32, found an integer literal; write it with a decimal point (`1.0`)")),
                        Some(Scalar::Bool) => return Err(err(span, "expected bool, found an integer literal")),
                        Some(t) => t,
                        None if neg => Scalar::I32,
                        None => Scalar::U32,
                    },
                    s => return Err(err(span, format!("integer suffix `{s}` is not supported; use u32 or i32"))),
                };
                let v: i64 = i.base10_parse().map_err(|_| err(span, "integer literal out of range"))?;
                let v = if neg { -v } else { v };
                match ty {
                    Scalar::U32 => Literal::U32(u32::try_from(v).map_err(|_| err(span, format!("{v} does not fit in u32")))?),
                    _ => Literal::I32(i32::try_from(v).map_err(|_| err(span, format!("{v} does not fit in i32")))?),
                }
            }
            syn::Lit::Float(f) => {
                if !matches!(f.suffix(), "" | "f32") {
                    return Err(err(span, "only f32 floats exist in the DSL; write `1.0` or `1.0f32`"));
                }
                if f.suffix().is_empty() && matches!(expected, Some(Scalar::U32 | Scalar::I32)) {
                    return Err(err(span, format!("expected {}, found a float literal", expected.unwrap_or(Scalar::F32))));
                }
                let v: f32 = f.base10_parse()?;
                Literal::f32(if neg { -v } else { v })
            }
            _ => return Err(err(span, "unsupported literal; the DSL has bool, integer and f32 literals")),
        };
        Ok(self.mk(ExprKind::Lit(v), v.ty(), span))
    }

    fn path(&mut self, p: &syn::ExprPath, span: Span) -> syn::Result<Expr> {
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs.len() == 2 {
            let c = constant(&segs[0], &segs[1]).ok_or_else(|| {
                err(span, format!("unknown constant `{}`; supported: f32::{{INFINITY, NEG_INFINITY, NAN, MAX, MIN, MIN_POSITIVE, EPSILON}}, u32::{{MIN, MAX}}, i32::{{MIN, MAX}}", segs.join("::")))
            })?;
            return Ok(self.mk(ExprKind::Lit(c), c.ty(), span));
        }
        let name = segs.join("::");
        if let Some(axis) = ["WORKGROUP_X", "WORKGROUP_Y", "WORKGROUP_Z"].iter().position(|w| *w == name) {
            return Ok(self.mk(ExprKind::Builtin { builtin: Builtin::WorkgroupSize, axis: axis as u8 }, Scalar::U32, span));
        }
        match self.lookup(&name) {
            Some(Name::Local(v)) => match self.locals[v.0 as usize].ty {
                VarType::Scalar(t) => Ok(self.mk(ExprKind::Var(v), t, span)),
                VarType::Array { .. } => Err(err(span, format!("array `{name}` is not a value; index it (`{name}[i]`)"))),
            },
            Some(Name::Param(pid)) => match self.params[pid.0 as usize].kind.scalar_type() {
                Some(t) => Ok(self.mk(ExprKind::Param(pid), t, span)),
                None => Err(err(span, format!("buffer `{name}` is not a value; index it (`{name}[i]`)"))),
            },
            Some(Name::Shared(_)) => Err(err(span, format!("shared array `{name}` is not a value; index it (`{name}[i]`)"))),
            Some(Name::Tile(_)) => Err(err(span, format!("tile `{name}` is not a value; use it through `tile_*` operations"))),
            Some(Name::TileArray { .. }) => {
                Err(err(span, format!("tile array `{name}` is not a value; use its elements through `tile_*` operations")))
            }
            Some(Name::Argument(i) | Name::Counter(i)) => Ok(self.substitutions[i as usize].clone()),
            None => Err(err(span, self.unknown_name(&name))),
        }
    }

    fn unary(&mut self, u: &syn::ExprUnary, expected: Option<Scalar>) -> syn::Result<Expr> {
        let span = u.span();
        match u.op {
            syn::UnOp::Neg(_) => {
                // Fold `-literal` so that `-2147483648` and `-1` infer like Rust.
                if let syn::Expr::Lit(l) = &*u.expr {
                    return self.literal(&l.lit, true, expected, span);
                }
                let a = self.expr(&u.expr, expected)?;
                let ty = typing::unary_type(UnaryOp::Neg, a.ty).map_err(|m| err(span, m))?;
                Ok(self.mk(ExprKind::Unary(UnaryOp::Neg, Box::new(a)), ty, span))
            }
            syn::UnOp::Not(_) => {
                let a = self.expr(&u.expr, expected)?;
                let ty = typing::unary_type(UnaryOp::Not, a.ty).map_err(|m| err(span, m))?;
                Ok(self.mk(ExprKind::Unary(UnaryOp::Not, Box::new(a)), ty, span))
            }
            syn::UnOp::Deref(_) => Err(err(span, "dereference is not supported; index buffers directly")),
            _ => Err(err(span, "unsupported unary operator")),
        }
    }

    /// Lowers `l op r` with literal inference; f32 `/` becomes a `div` call.
    pub fn binary(&mut self, op: BinaryOp, l: &syn::Expr, r: &syn::Expr, expected: Option<Scalar>, span: Span, op_span: Span) -> syn::Result<Expr> {
        let operand_expect = match op {
            BinaryOp::And | BinaryOp::Or => Some(Scalar::Bool),
            o if o.is_comparison() => None,
            _ => expected,
        };
        let (a, b) = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            let a = self.expr(l, operand_expect)?;
            let b = self.expr(r, Some(Scalar::U32))?;
            (a, b)
        } else if is_untyped_literal(l) && !is_untyped_literal(r) {
            let b = self.expr(r, operand_expect)?;
            let a = self.expr(l, Some(b.ty))?;
            (a, b)
        } else {
            let a = self.expr(l, operand_expect)?;
            let b = self.expr(r, Some(a.ty))?;
            (a, b)
        };
        self.combine(op, a, b, span, op_span)
    }

    /// Builds `a op b` from lowered operands.
    pub fn combine(&mut self, op: BinaryOp, a: Expr, b: Expr, span: Span, op_span: Span) -> syn::Result<Expr> {
        if op == BinaryOp::Div && a.ty == Scalar::F32 && b.ty == Scalar::F32 {
            return Ok(self.library_call("div", vec![a, b], span));
        }
        let ty = typing::binary_type(op, a.ty, b.ty).map_err(|m| self.literal_typed_hint(&a, &b).unwrap_or_else(|| err(op_span, m)))?;
        Ok(self.mk(ExprKind::Binary(op, Box::new(a), Box::new(b)), ty, span))
    }

    /// Where an operand is a local typed by an integer literal alone (`let mut s = 0;`)
    /// and the other is an f32: the error at the literal, with the fix.
    fn literal_typed_hint(&self, a: &Expr, b: &Expr) -> Option<syn::Error> {
        for (x, y) in [(a, b), (b, a)] {
            if let (ExprKind::Var(v), Scalar::F32) = (&x.kind, y.ty) {
                if let Some(&lit) = self.int_literal_locals.get(&v.0) {
                    let name = &self.locals[v.0 as usize].name;
                    return Some(err(
                        lit,
                        format!(
                            "`{name}` is {} because its initial value is an integer literal, and it is used with an f32 \
                             later; write the literal with a decimal point (`0.0`) to make `{name}` an f32",
                            x.ty
                        ),
                    ));
                }
            }
        }
        None
    }

    fn library_call(&mut self, name: &str, args: Vec<Expr>, span: Span) -> Expr {
        self.used_functions.insert(name.to_string());
        let ret = mathlib::lookup(name).map(|f| f.ret).unwrap_or(Scalar::F32);
        self.mk(ExprKind::Call { func: name.to_string(), args }, ret, span)
    }

    /// An index: an untyped literal is u32.
    pub fn index_expr(&mut self, e: &syn::Expr) -> syn::Result<Expr> {
        let i = self.expr(e, Some(Scalar::U32))?;
        if !i.ty.is_int() {
            return Err(err(e.span(), format!("an index must be u32 or i32, found {}", i.ty)));
        }
        Ok(i)
    }

    /// What `x` in `x[i]` names.
    pub fn place(&mut self, e: &syn::Expr) -> syn::Result<Place> {
        let syn::Expr::Path(p) = e else {
            return Err(err(e.span(), "only buffers, local arrays and shared arrays can be indexed, by name"));
        };
        let name = p.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
        match self.lookup(&name) {
            Some(Name::Param(pid)) if matches!(self.params[pid.0 as usize].kind, ParamKind::Buffer { .. }) => Ok(Place::Buffer(pid)),
            Some(Name::Param(_)) => Err(err(e.span(), format!("`{name}` is a scalar parameter; only buffers and arrays can be indexed"))),
            Some(Name::Shared(s)) => Ok(Place::Shared(s)),
            Some(Name::Tile(_)) => Err(err(e.span(), format!("tile `{name}` cannot be indexed; store it with `tile_store`"))),
            Some(Name::TileArray { .. }) => {
                Err(err(e.span(), format!("`{name}` names a tile array here, whose elements are used through `tile_*` operations; only buffers and arrays of values can be indexed")))
            }
            Some(Name::Counter(_)) => Err(err(e.span(), format!("`{name}` is a loop counter; only buffers and arrays can be indexed"))),
            Some(Name::Argument(_)) => Err(err(e.span(), format!("`{name}` is a scalar closure parameter; only buffers and arrays can be indexed"))),
            Some(Name::Local(v)) => match self.locals[v.0 as usize].ty {
                VarType::Array { .. } => Ok(Place::Local(v)),
                VarType::Scalar(_) => Err(err(e.span(), format!("`{name}` is a scalar; only buffers and arrays can be indexed"))),
            },
            None => Err(err(e.span(), format!("cannot find buffer or array `{name}` in this kernel"))),
        }
    }

    /// The value type of a place's elements.
    pub fn place_elem(&self, place: Place) -> Scalar {
        match place {
            Place::Buffer(p) => match &self.params[p.0 as usize].kind {
                ParamKind::Buffer { elem, .. } => elem.value_type(),
                _ => Scalar::U32,
            },
            Place::Local(v) => match self.locals[v.0 as usize].ty {
                VarType::Array { elem, .. } | VarType::Scalar(elem) => elem,
            },
            Place::Shared(s) => self.shared[s.0 as usize].elem,
        }
    }

    fn args(&mut self, args: &syn::punctuated::Punctuated<syn::Expr, syn::Token![,]>, expected: Option<Scalar>) -> syn::Result<Vec<Expr>> {
        // Lower typed arguments first so that untyped literals can follow them.
        let mut out: Vec<Option<Expr>> = vec![None; args.len()];
        for (i, a) in args.iter().enumerate() {
            if !is_untyped_literal(a) {
                out[i] = Some(self.expr(a, expected)?);
            }
        }
        let first_typed = out.iter().flatten().next().map(|e| e.ty).or(expected);
        for (i, a) in args.iter().enumerate() {
            if out[i].is_none() {
                out[i] = Some(self.expr(a, first_typed)?);
            }
        }
        Ok(out.into_iter().flatten().collect())
    }

    fn call(&mut self, c: &syn::ExprCall, expected: Option<Scalar>) -> syn::Result<Expr> {
        let span = c.span();
        let syn::Expr::Path(p) = &*c.func else {
            return Err(err(c.func.span(), "only named functions can be called"));
        };
        let segs: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
        if segs == ["f32", "from_bits"] {
            let args = self.args(&c.args, Some(Scalar::U32))?;
            if args.len() != 1 || !args[0].ty.is_int() {
                return Err(err(span, "`f32::from_bits` takes one u32"));
            }
            let a = args.into_iter().next().unwrap_or_else(|| unreachable!());
            return Ok(self.mk(ExprKind::BitCast(Box::new(a)), Scalar::F32, span));
        }
        let name = segs.join("::");
        if let Some(index) = self.expression_closure(&name) {
            return self.inline_expression(index, c);
        }
        if self.is_closure(&name) {
            return Err(err(span, format!("closure `{name}` has statements: call it as the whole value of a `let` or an assignment (`let x = {name}(…);`); only a closure whose body is one expression can be called inside an expression")));
        }
        if builtin_of(&name).is_some() {
            return Err(err(span, format!("`{name}()` is a 3-component id; take a component: `{name}().x`")));
        }
        match name.as_str() {
            "workgroup_sum" | "workgroup_max" | "workgroup_min" => {
                return Err(err(span, format!("`{name}` must be the whole right-hand side of a `let` or an assignment: `let s = {name}(value);`")))
            }
            "barrier" => return Err(err(span, "`barrier()` is a statement: `barrier();`")),
            "last_arrival" => {
                return Err(err(
                    span,
                    "`last_arrival` must be the whole right-hand side of a `let`: `let last = last_arrival(counters, index, count);`",
                ))
            }
            "shared" => return Err(err(span, "`shared::<T, N>()` only initializes a top-level `let`")),
            "select" => {
                if c.args.len() != 3 {
                    return Err(err(span, "`select(cond, a, b)` takes 3 arguments"));
                }
                let cond = self.expr(&c.args[0], Some(Scalar::Bool))?;
                if cond.ty != Scalar::Bool {
                    return Err(err(c.args[0].span(), format!("the condition of `select` must be bool, found {}", cond.ty)));
                }
                let pair: syn::punctuated::Punctuated<syn::Expr, syn::Token![,]> = c.args.iter().skip(1).cloned().collect();
                let mut ab = self.args(&pair, expected)?;
                let b = ab.pop().unwrap_or_else(|| unreachable!());
                let a = ab.pop().unwrap_or_else(|| unreachable!());
                if a.ty != b.ty {
                    return Err(err(span, format!("`select` arms differ: {} and {}", a.ty, b.ty)));
                }
                let ty = a.ty;
                return Ok(self.mk(ExprKind::Select(Box::new(cond), Box::new(a), Box::new(b)), ty, span));
            }
            _ => {}
        }
        if let Some(op) = Intrinsic::parse(&name) {
            let hint = match op {
                Intrinsic::Fma | Intrinsic::F32ToF16Bits => Some(Scalar::F32),
                Intrinsic::F16BitsToF32 | Intrinsic::Bf16BitsToF32 => Some(Scalar::U32),
                _ => expected,
            };
            let args = self.args(&c.args, hint)?;
            let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
            let ty = typing::intrinsic_type(op, &tys).map_err(|m| err(span, m))?;
            return Ok(self.mk(ExprKind::Intrinsic(op, args), ty, span));
        }
        if let Some(f) = mathlib::lookup(&name) {
            let args = self.args(&c.args, Some(Scalar::F32))?;
            let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
            if tys != f.params {
                let want: Vec<_> = f.params.iter().map(|t| t.name()).collect();
                let got: Vec<_> = tys.iter().map(|t| t.name()).collect();
                return Err(err(span, format!("`{name}` takes ({}), got ({})", want.join(", "), got.join(", "))));
            }
            return Ok(self.library_call(&name, args, span));
        }
        Err(err(
            c.func.span(),
            format!(
                "`{name}` is not a DSL function. Available: local_id, group_id, global_id, num_groups, select, \
                 barrier, workgroup_sum/max/min, last_arrival, {}, and the math library: {}. A kernel body sees no items \
                 outside it: a helper `fn` is written as a closure at the top of the body, \
                 `let {name} = |x: f32| -> f32 {{ … }};` (docs/DSL.md, \"Kernel closures\")",
                Intrinsic::ALL.iter().map(|i| i.dsl_name()).collect::<Vec<_>>().join(", "),
                mathlib::names().join(", ")
            ),
        ))
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> syn::Result<Expr> {
        let span = m.span();
        let name = m.method.to_string();
        if name == "step_by" {
            return Err(err(m.method.span(), "`step_by` is only allowed on the range of a `for` loop"));
        }
        let recv = self.expr(&m.receiver, None)?;
        let mut args = vec![recv];
        let rest = self.args(&m.args, Some(args[0].ty))?;
        args.extend(rest);
        let intrinsic = match name.as_str() {
            "to_bits" => {
                if args.len() != 1 || args[0].ty != Scalar::F32 {
                    return Err(err(span, "`to_bits()` takes an f32 receiver and no arguments"));
                }
                let a = args.pop().unwrap_or_else(|| unreachable!());
                return Ok(self.mk(ExprKind::BitCast(Box::new(a)), Scalar::U32, span));
            }
            "min" => Intrinsic::Min,
            "max" => Intrinsic::Max,
            "clamp" => Intrinsic::Clamp,
            "abs" => Intrinsic::Abs,
            "mul_add" => Intrinsic::Fma,
            "count_ones" => Intrinsic::CountOnes,
            other => {
                if let Some((_, lib)) = METHOD_FUNCTIONS.iter().find(|(m, _)| *m == other) {
                    if args.len() != 1 || args[0].ty != Scalar::F32 {
                        return Err(err(span, format!("`.{other}()` takes an f32 receiver and no arguments")));
                    }
                    return Ok(self.library_call(lib, args, span));
                }
                return Err(err(
                    m.method.span(),
                    format!(
                        "method `.{other}()` is not part of the DSL; available methods: {METHODS}; library functions: {}",
                        mathlib::names().join(", ")
                    ),
                ));
            }
        };
        let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
        let ty = typing::intrinsic_type(intrinsic, &tys).map_err(|msg| err(span, msg))?;
        Ok(self.mk(ExprKind::Intrinsic(intrinsic, args), ty, span))
    }

    fn field(&mut self, f: &syn::ExprField) -> syn::Result<Expr> {
        let span = f.span();
        let syn::Member::Named(member) = &f.member else {
            return Err(err(f.member.span(), "use `.x`, `.y` or `.z`"));
        };
        let axis = match member.to_string().as_str() {
            "x" => 0,
            "y" => 1,
            "z" => 2,
            _ => return Err(err(member.span(), "ids have components `.x`, `.y` and `.z`")),
        };
        let builtin = match &*f.base {
            syn::Expr::Call(c) if c.args.is_empty() => match &*c.func {
                syn::Expr::Path(p) => p.path.get_ident().and_then(|i| builtin_of(&i.to_string())),
                _ => None,
            },
            _ => None,
        };
        let builtin = builtin.ok_or_else(|| err(f.base.span(), "field access is only for ids: `local_id().x`, `group_id().y`, …"))?;
        Ok(self.mk(ExprKind::Builtin { builtin, axis }, Scalar::U32, span))
    }
}

fn constant(ty: &str, name: &str) -> Option<Literal> {
    Some(match (ty, name) {
        ("f32", "INFINITY") => Literal::f32(f32::INFINITY),
        ("f32", "NEG_INFINITY") => Literal::f32(f32::NEG_INFINITY),
        ("f32", "NAN") => Literal::f32(f32::NAN),
        ("f32", "MAX") => Literal::f32(f32::MAX),
        ("f32", "MIN") => Literal::f32(f32::MIN),
        ("f32", "MIN_POSITIVE") => Literal::f32(f32::MIN_POSITIVE),
        ("f32", "EPSILON") => Literal::f32(f32::EPSILON),
        ("u32", "MAX") => Literal::U32(u32::MAX),
        ("u32", "MIN") => Literal::U32(0),
        ("i32", "MAX") => Literal::I32(i32::MAX),
        ("i32", "MIN") => Literal::I32(i32::MIN),
        _ => return None,
    })
}
