//! A small typed builder for straight-line IR functions, so the library reads like the
//! arithmetic it is. Types follow [`crate::typing`]; a mistake in the library shows up
//! as a validation error in the library's own tests, never as a panic.

use crate::ir::{BinaryOp, Expr, ExprKind, Function, Init, Intrinsic, LocalDecl, SpanId, Stmt, StmtKind, UnaryOp, VarId};
use crate::types::{Literal, Scalar, VarType};
use crate::typing;
use std::ops::{Add, BitAnd, BitOr, BitXor, Mul, Neg, Shl, Shr, Sub};

/// An expression under construction.
#[derive(Clone, Debug)]
pub struct V(pub Expr);

fn mk(kind: ExprKind, ty: Scalar) -> V {
    V(Expr { kind, ty, span: SpanId::NONE })
}

/// An f32 constant.
pub fn f(x: f32) -> V {
    mk(ExprKind::Lit(Literal::f32(x)), Scalar::F32)
}

/// An f32 constant given by its bits.
pub fn fbits(bits: u32) -> V {
    mk(ExprKind::Lit(Literal::F32(bits)), Scalar::F32)
}

/// A u32 constant.
pub fn u(x: u32) -> V {
    mk(ExprKind::Lit(Literal::U32(x)), Scalar::U32)
}

/// An i32 constant.
pub fn i(x: i32) -> V {
    mk(ExprKind::Lit(Literal::I32(x)), Scalar::I32)
}

fn bin(op: BinaryOp, a: V, b: V) -> V {
    let ty = typing::binary_type(op, a.0.ty, b.0.ty).unwrap_or(a.0.ty);
    mk(ExprKind::Binary(op, Box::new(a.0), Box::new(b.0)), ty)
}

fn intr(op: Intrinsic, args: Vec<V>) -> V {
    let tys: Vec<Scalar> = args.iter().map(|a| a.0.ty).collect();
    let ty = typing::intrinsic_type(op, &tys).unwrap_or(tys[0]);
    mk(ExprKind::Intrinsic(op, args.into_iter().map(|a| a.0).collect()), ty)
}

macro_rules! binop {
    ($tr:ident, $m:ident, $op:ident) => {
        impl $tr for V {
            type Output = V;
            fn $m(self, rhs: V) -> V {
                bin(BinaryOp::$op, self, rhs)
            }
        }
    };
}
binop!(Add, add, Add);
binop!(Sub, sub, Sub);
binop!(Mul, mul, Mul);
binop!(BitAnd, bitand, BitAnd);
binop!(BitOr, bitor, BitOr);
binop!(BitXor, bitxor, BitXor);
binop!(Shl, shl, Shl);
binop!(Shr, shr, Shr);

impl Neg for V {
    type Output = V;
    fn neg(self) -> V {
        let ty = self.0.ty;
        mk(ExprKind::Unary(UnaryOp::Neg, Box::new(self.0)), ty)
    }
}

impl V {
    /// `self < rhs`.
    pub fn lt(self, rhs: V) -> V {
        bin(BinaryOp::Lt, self, rhs)
    }
    /// `self > rhs`.
    pub fn gt(self, rhs: V) -> V {
        bin(BinaryOp::Gt, self, rhs)
    }
    /// `self >= rhs`.
    pub fn ge(self, rhs: V) -> V {
        bin(BinaryOp::Ge, self, rhs)
    }
    /// `self == rhs`.
    pub fn eq(self, rhs: V) -> V {
        bin(BinaryOp::Eq, self, rhs)
    }
    /// `self != rhs`.
    pub fn ne(self, rhs: V) -> V {
        bin(BinaryOp::Ne, self, rhs)
    }
    /// `self && rhs`.
    pub fn and(self, rhs: V) -> V {
        bin(BinaryOp::And, self, rhs)
    }
    /// `self || rhs`.
    pub fn or(self, rhs: V) -> V {
        bin(BinaryOp::Or, self, rhs)
    }
    /// The bits of an f32 (or an i32) as u32.
    pub fn bits(self) -> V {
        mk(ExprKind::BitCast(Box::new(self.0)), Scalar::U32)
    }
    /// Reinterprets u32/i32 bits as f32.
    pub fn as_f32_bits(self) -> V {
        mk(ExprKind::BitCast(Box::new(self.0)), Scalar::F32)
    }
    /// Value conversion (`as`).
    pub fn cast(self, to: Scalar) -> V {
        mk(ExprKind::Cast(Box::new(self.0)), to)
    }
}

/// `select(c, a, b)`.
pub fn select(c: V, a: V, b: V) -> V {
    let ty = a.0.ty;
    mk(ExprKind::Select(Box::new(c.0), Box::new(a.0), Box::new(b.0)), ty)
}

/// `fma(a, b, c)`.
pub fn fma(a: V, b: V, c: V) -> V {
    intr(Intrinsic::Fma, vec![a, b, c])
}

/// `clamp(x, lo, hi)`.
pub fn clamp(x: V, lo: V, hi: V) -> V {
    intr(Intrinsic::Clamp, vec![x, lo, hi])
}

/// `abs(x)`.
pub fn abs(x: V) -> V {
    intr(Intrinsic::Abs, vec![x])
}

/// A call to another library function.
pub fn call(func: &Function, args: Vec<V>) -> V {
    mk(ExprKind::Call { func: func.name.clone(), args: args.into_iter().map(|a| a.0).collect() }, func.ret)
}

/// Horner evaluation with `fma`; `coeffs` from the highest degree down.
pub fn horner(x: &V, coeffs: &[f32]) -> V {
    let mut acc = f(coeffs[0]);
    for &c in &coeffs[1..] {
        acc = fma(acc, x.clone(), f(c));
    }
    acc
}

/// Builds one function: parameters, `let`s, result.
pub struct FnBuilder {
    name: String,
    doc: String,
    params: Vec<Scalar>,
    locals: Vec<LocalDecl>,
    body: Vec<Stmt>,
}

impl FnBuilder {
    /// Starts a function with f32 parameters named `names`.
    pub fn new(name: &str, doc: &str, names: &[&str]) -> (FnBuilder, Vec<V>) {
        let locals: Vec<LocalDecl> =
            names.iter().map(|n| LocalDecl { name: n.to_string(), ty: VarType::Scalar(Scalar::F32), mutable: false }).collect();
        let args = (0..names.len()).map(|i| mk(ExprKind::Var(VarId(i as u32)), Scalar::F32)).collect();
        (FnBuilder { name: name.into(), doc: doc.into(), params: vec![Scalar::F32; names.len()], locals, body: Vec::new() }, args)
    }

    /// `let name = value;` and returns the new variable.
    pub fn let_(&mut self, name: &str, value: V) -> V {
        let id = VarId(self.locals.len() as u32);
        let ty = value.0.ty;
        self.locals.push(LocalDecl { name: name.into(), ty: VarType::Scalar(ty), mutable: false });
        self.body.push(Stmt { kind: StmtKind::Let { var: id, init: Some(Init::Value(value.0)) }, span: SpanId::NONE });
        mk(ExprKind::Var(id), ty)
    }

    /// Finishes with the returned value.
    pub fn finish(self, result: V) -> Function {
        Function { name: self.name, doc: self.doc, params: self.params, ret: result.0.ty, locals: self.locals, body: self.body, result: result.0 }
    }
}

// Bit-level helpers shared by the functions. All integer: a device's denormal mode
// cannot change them.

/// Sign bit of an f32 as u32.
pub fn sign_bit(x: &V) -> V {
    x.clone().bits() & u(0x8000_0000)
}

/// Biased exponent field (0..=255) as u32.
pub fn exp_field(x: &V) -> V {
    (x.clone().bits() >> u(23)) & u(0xff)
}

/// `x`, or a zero of the same sign when `x` is subnormal: the library neither
/// consumes nor produces subnormals, so flushing devices and preserving ones agree.
pub fn ftz(x: V) -> V {
    select(exp_field(&x).eq(u(0)), sign_bit(&x).as_f32_bits(), x)
}

/// `2^e` for `e` in [-126, 127] (i32), built from its exponent bits.
pub fn pow2(e: V) -> V {
    ((e + i(127)).cast(Scalar::U32) << u(23)).as_f32_bits()
}

/// `y * 2^k` for i32 `k` in [-252, 254] through two exact power-of-two steps, so no
/// intermediate is subnormal or overflows early; only the final product rounds.
pub fn scale(fb: &mut FnBuilder, y: V, k: V) -> V {
    let k1 = fb.let_("k1", k.clone() >> u(1));
    let k2 = fb.let_("k2", k - k1.clone());
    (y * pow2(k1)) * pow2(k2)
}

/// Rounds an f32 of magnitude below 2^22 to the nearest integer (ties to even) by
/// adding and removing 1.5 · 2^23: two correctly rounded additions, exact everywhere.
pub fn round_int(x: V) -> V {
    (x + f(12_582_912.0)) - f(12_582_912.0)
}

/// Positive infinity.
pub fn inf() -> V {
    fbits(0x7f80_0000)
}

/// The canonical quiet NaN.
pub fn nan() -> V {
    fbits(0x7fc0_0000)
}

/// `x != x`.
pub fn is_nan(x: &V) -> V {
    x.clone().ne(x.clone())
}
