//! The portable math library (DESIGN.md §4): transcendental and division-like functions
//! written as straight-line IR from `+ − ×`, `fma`, comparisons, `select` and integer
//! bit operations only. No backend's native `exp`, `/` or `sqrt` is ever called, so
//! every backend computes the same bits as the interpreter. No function consumes or
//! produces a subnormal (they count as zero going in and are flushed coming out), so a
//! device's denormal mode cannot change a result either.
//!
//! Each function's error bound against f64 is in its doc comment and in [`BOUNDS`],
//! and a test measures it over 10^6 random inputs of its domain.

pub mod builder;
// Polynomial coefficients are fitted values written with every digit the fit produced
// (one of them is close to, but not, ln 2): keep them exactly as fitted.
#[allow(clippy::excessive_precision, clippy::approx_constant)]
mod activation;
#[allow(clippy::excessive_precision, clippy::approx_constant)]
mod exp;
#[allow(clippy::excessive_precision, clippy::approx_constant)]
mod log;
mod recip;

use crate::ir::{ExprKind, Function};
use crate::visit::{stmt_exprs, walk_expr};
use std::sync::OnceLock;

/// Where a function's error bound holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Domain {
    /// Uniform in value on `[lo, hi]`.
    Uniform(f64, f64),
    /// Every positive normal float, uniform in exponent and mantissa.
    PositiveNormal,
    /// Every normal float of either sign (for each argument).
    Normal,
}

/// A function's documented accuracy.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bound {
    /// Library function name.
    pub name: &'static str,
    /// Number of f32 arguments.
    pub arity: usize,
    /// Domain of the bound.
    pub domain: Domain,
    /// Maximum error in units in the last place of the f32 result.
    pub max_ulp: f64,
}

/// The documented bounds; the math-library test asserts each one.
pub const BOUNDS: &[Bound] = &[
    Bound { name: "exp2", arity: 1, domain: Domain::Uniform(-126.0, 127.99), max_ulp: 1.0 },
    Bound { name: "exp", arity: 1, domain: Domain::Uniform(-87.3, 88.7), max_ulp: 1.0 },
    Bound { name: "recip", arity: 1, domain: Domain::Normal, max_ulp: 1.0 },
    Bound { name: "div", arity: 2, domain: Domain::Normal, max_ulp: 1.0 },
    Bound { name: "rsqrt", arity: 1, domain: Domain::PositiveNormal, max_ulp: 1.0 },
    Bound { name: "sqrt", arity: 1, domain: Domain::PositiveNormal, max_ulp: 1.0 },
    Bound { name: "log", arity: 1, domain: Domain::PositiveNormal, max_ulp: 1.0 },
    Bound { name: "log2", arity: 1, domain: Domain::PositiveNormal, max_ulp: 1.5 },
    Bound { name: "log1p", arity: 1, domain: Domain::Uniform(-0.999, 1.0e6), max_ulp: 2.0 },
    Bound { name: "tanh", arity: 1, domain: Domain::Uniform(-10.0, 10.0), max_ulp: 2.0 },
    Bound { name: "sigmoid", arity: 1, domain: Domain::Uniform(-87.0, 88.0), max_ulp: 2.5 },
    Bound { name: "softplus", arity: 1, domain: Domain::Uniform(-87.0, 88.0), max_ulp: 2.0 },
    Bound { name: "gelu_tanh", arity: 1, domain: Domain::Uniform(-4.0, 10.0), max_ulp: 32.0 },
    Bound { name: "erf", arity: 1, domain: Domain::Uniform(-5.0, 5.0), max_ulp: 2.5 },
    Bound { name: "gelu_erf", arity: 1, domain: Domain::Uniform(-13.0, 10.0), max_ulp: 5.0 },
];

/// Every library function, callees before callers.
pub fn library() -> &'static [Function] {
    static LIB: OnceLock<Vec<Function>> = OnceLock::new();
    LIB.get_or_init(|| {
        let exp2 = exp::exp2();
        let exp = exp::exp();
        let recip = recip::recip();
        let div = recip::div();
        let rsqrt = recip::rsqrt();
        let sqrt = recip::sqrt();
        let log = log::log();
        let log2 = log::log2();
        let log1p = log::log1p(&log, &recip);
        let tanh = activation::tanh(&exp, &recip);
        let sigmoid = activation::sigmoid(&exp, &recip);
        let softplus = activation::softplus(&exp, &log1p);
        let gelu_tanh = activation::gelu_tanh(&exp, &recip);
        let erf = activation::erf(&exp, &recip);
        let gelu_erf = activation::gelu_erf(&exp, &recip);
        vec![exp2, exp, recip, div, rsqrt, sqrt, log, log2, log1p, tanh, sigmoid, softplus, gelu_tanh, erf, gelu_erf]
    })
}

/// Looks a library function up by name.
pub fn lookup(name: &str) -> Option<&'static Function> {
    library().iter().find(|f| f.name == name)
}

/// Names of the library functions, for "did you mean" messages.
pub fn names() -> Vec<&'static str> {
    library().iter().map(|f| f.name.as_str()).collect()
}

fn direct_callees(f: &Function) -> Vec<String> {
    let mut out = Vec::new();
    let mut visit = |e: &crate::ir::Expr| {
        walk_expr(e, &mut |x| {
            if let ExprKind::Call { func, .. } = &x.kind {
                out.push(func.clone());
            }
        })
    };
    for s in &f.body {
        for e in stmt_exprs(s) {
            visit(e);
        }
    }
    visit(&f.result);
    out
}

/// The named functions and everything they call, in library (dependency) order.
pub fn closure<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<Function> {
    let lib = library();
    let mut wanted = vec![false; lib.len()];
    let mut stack: Vec<String> = names.into_iter().map(String::from).collect();
    while let Some(n) = stack.pop() {
        if let Some(i) = lib.iter().position(|f| f.name == n) {
            if !wanted[i] {
                wanted[i] = true;
                stack.extend(direct_callees(&lib[i]));
            }
        }
    }
    lib.iter().zip(wanted).filter(|(_, w)| *w).map(|(f, _)| f.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bound_names_a_library_function_and_vice_versa() {
        for b in BOUNDS {
            let f = lookup(b.name).unwrap_or_else(|| panic!("{} missing", b.name));
            assert_eq!(f.params.len(), b.arity, "{}", b.name);
        }
        assert_eq!(BOUNDS.len(), library().len());
    }

    #[test]
    fn closure_includes_callees_first() {
        let fs = closure(["softplus"]);
        let names: Vec<_> = fs.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["exp", "recip", "log", "log1p", "softplus"]);
    }

    #[test]
    fn library_validates() {
        // Wrap every function in an empty kernel: the validator checks function bodies.
        let k = crate::ir::Kernel {
            name: "library".into(),
            doc: String::new(),
            workgroup: [1, 1, 1],
            class: crate::ir::Determinism::Exact,
            resident: None,
            params: vec![],
            shared: vec![],
            tiles: vec![],
            locals: vec![],
            body: vec![],
            functions: library().to_vec(),
            spans: vec![],
            source: Default::default(),
        };
        if let Err(errs) = crate::validate::validate(&k) {
            panic!("{errs:#?}");
        }
    }
}
