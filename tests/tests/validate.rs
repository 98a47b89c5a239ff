//! The IR validator on IR that did not come through the macro (hand-modified after
//! lowering), so each rule is exercised on its own: every error names the kernel and
//! the construct, and the unmodified kernel validates (the negative control).

use onekernel_dsl::ir::*;
use onekernel_dsl::types::{Literal, Scalar, VarType};
use onekernel_dsl::validate::{validate, validate_with, ErrorKind, Limits};
use onekernel_macros::kernel;

#[kernel(workgroup = 64)]
fn base(x: &[f32], y: &mut [f32], #[push] n: u32, #[spec(default = 4)] k: u32) {
    let s = shared::<f32, 64>();
    let t = local_id().x;
    let mut acc = 0.0;
    if t < n {
        acc = x[t] * (k as f32);
    }
    s[t] = acc;
    barrier();
    let total = workgroup_sum(s[t]);
    y[t] = total;
}

fn kernel() -> Kernel {
    base().expect("the unmodified kernel is valid")
}

fn errors(k: &Kernel) -> Vec<(ErrorKind, String)> {
    validate(k).err().unwrap_or_default().into_iter().map(|e| (e.kind, e.to_string())).collect()
}

fn expect(k: &Kernel, kind: ErrorKind, needle: &str) {
    let errs = errors(k);
    assert!(
        errs.iter().any(|(kd, m)| *kd == kind && m.contains(needle) && m.starts_with("kernel `base`")),
        "expected {kind:?} containing {needle:?}, got {errs:#?}"
    );
}

/// Applies `f` to the first statement (depth-first, source order) matching `pred`.
fn modify(body: &mut [Stmt], pred: &dyn Fn(&StmtKind) -> bool, f: &mut dyn FnMut(&mut Stmt)) -> bool {
    for s in body.iter_mut() {
        if pred(&s.kind) {
            f(s);
            return true;
        }
        if let StmtKind::If { then_body, else_body, .. } = &mut s.kind {
            if modify(then_body, pred, f) || modify(else_body, pred, f) {
                return true;
            }
        }
    }
    false
}

fn edit(k: &mut Kernel, pred: &dyn Fn(&StmtKind) -> bool, mut f: impl FnMut(&mut StmtKind)) {
    assert!(modify(&mut k.body, pred, &mut |s| f(&mut s.kind)), "statement present");
}

fn is_buffer_store(s: &StmtKind) -> bool {
    matches!(s, StmtKind::Store { place: Place::Buffer(_), .. })
}

#[test]
fn the_unmodified_kernel_validates() {
    assert!(errors(&kernel()).is_empty());
}

#[test]
fn type_mismatch_is_reported_with_location() {
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { value, .. } = s {
            *value = Expr { kind: ExprKind::Lit(Literal::U32(1)), ty: Scalar::U32, span: value.span };
        }
    });
    expect(&k, ErrorKind::Type, "a value stored into `y` must be f32, found u32");
    let msg = validate(&k).unwrap_err()[0].to_string();
    assert!(msg.contains("validate.rs:"), "location in {msg}");
}

#[test]
fn wrong_type_annotation_is_caught() {
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { value, .. } = s {
            value.ty = Scalar::I32;
        }
    });
    expect(&k, ErrorKind::Type, "annotated i32 but computes f32");
}

#[test]
fn undeclared_local_and_parameter() {
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { value, .. } = s {
            value.kind = ExprKind::Var(VarId(999));
        }
    });
    expect(&k, ErrorKind::Undeclared, "undeclared local #999");
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { place, .. } = s {
            *place = Place::Buffer(ParamId(42));
        }
    });
    expect(&k, ErrorKind::Undeclared, "undeclared parameter #42");
}

#[test]
fn unassigned_use() {
    let mut k = kernel();
    edit(&mut k, &|s| matches!(s, StmtKind::Let { init: Some(Init::Value(Expr { kind: ExprKind::Lit(_), .. })), .. }), |s| {
        if let StmtKind::Let { init, .. } = s {
            *init = None;
        }
    });
    expect(&k, ErrorKind::Unassigned, "possibly-unassigned variable `acc`");
}

#[test]
fn barrier_and_reduction_in_non_uniform_control_flow() {
    let mut k = kernel();
    // Move the barrier into the `if t < n` branch.
    let pos = k.body.iter().position(|s| matches!(s.kind, StmtKind::Barrier)).unwrap();
    let barrier = k.body.remove(pos);
    edit(&mut k, &|s| matches!(s, StmtKind::If { .. }), |s| {
        if let StmtKind::If { then_body, .. } = s {
            then_body.push(barrier.clone());
        }
    });
    expect(&k, ErrorKind::NonUniform, "`barrier()` in non-uniform control flow");

    let mut k = kernel();
    let pos = k.body.iter().position(|s| matches!(s.kind, StmtKind::Reduce { .. })).unwrap();
    let reduce = k.body.remove(pos);
    edit(&mut k, &|s| matches!(s, StmtKind::If { .. }), |s| {
        if let StmtKind::If { then_body, .. } = s {
            then_body.push(reduce.clone());
        }
    });
    expect(&k, ErrorKind::NonUniform, "`workgroup_sum` in non-uniform control flow");
}

#[test]
fn uniform_branches_may_hold_barriers() {
    let mut k = kernel();
    let pos = k.body.iter().position(|s| matches!(s.kind, StmtKind::Barrier)).unwrap();
    let barrier = k.body.remove(pos);
    // `if n > 3 { barrier(); }`: n is a push constant, so the branch is uniform.
    let (n, _) = k.param("n").unwrap();
    let cond = Expr {
        kind: ExprKind::Binary(
            BinaryOp::Gt,
            Box::new(Expr { kind: ExprKind::Param(n), ty: Scalar::U32, span: SpanId::NONE }),
            Box::new(Expr { kind: ExprKind::Lit(Literal::U32(3)), ty: Scalar::U32, span: SpanId::NONE }),
        ),
        ty: Scalar::Bool,
        span: SpanId::NONE,
    };
    k.body.insert(pos, Stmt { kind: StmtKind::If { cond, then_body: vec![barrier], else_body: vec![] }, span: SpanId::NONE });
    assert!(errors(&k).is_empty(), "{:#?}", errors(&k));
}

#[test]
fn shared_memory_limit_is_227_kib_by_default_and_configurable() {
    let mut k = kernel();
    k.shared[0].len = 227 * 256 + 1;
    expect(&k, ErrorKind::Limit, "232452 bytes; the limit is 232448");
    k.shared[0].len = 227 * 256;
    assert!(errors(&k).is_empty());
    assert!(validate_with(&k, &Limits { shared_bytes: 1024, ..Limits::default() }).is_err());
}

#[test]
fn push_constants_over_128_bytes() {
    let mut k = kernel();
    for i in 0..32 {
        k.params.push(Param { name: format!("p{i}"), kind: ParamKind::Push { ty: Scalar::U32 }, span: SpanId::NONE });
    }
    expect(&k, ErrorKind::Limit, "push constants take 132 bytes");
}

#[test]
fn spec_constant_without_default() {
    let mut k = kernel();
    let (id, _) = k.param("k").unwrap();
    k.params[id.0 as usize].kind = ParamKind::Spec { ty: Scalar::U32, default: None, values: None };
    expect(&k, ErrorKind::SpecDefault, "specialization constant `k` has no default");
}

#[test]
fn unsupported_operations() {
    // f32 `/` must go through the library; as a raw IR operator it is rejected.
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { value, .. } = s {
            let v = value.clone();
            *value = Expr { kind: ExprKind::Binary(BinaryOp::Div, Box::new(v.clone()), Box::new(v)), ty: Scalar::F32, span: SpanId::NONE };
        }
    });
    expect(&k, ErrorKind::Type, "lowered to the library's `div(a, b)`");
    // break outside a loop.
    let mut k = kernel();
    k.body.push(Stmt { kind: StmtKind::Break, span: SpanId::NONE });
    expect(&k, ErrorKind::Unsupported, "outside of a loop");
    // A workgroup that is not a power of two cannot use the reduction tree.
    let mut k = kernel();
    k.workgroup = [48, 1, 1];
    expect(&k, ErrorKind::Limit, "power-of-two workgroup");
}

#[test]
fn immutable_assignment_and_read_only_store() {
    let mut k = kernel();
    let acc = k.locals.iter().position(|l| l.name == "acc").unwrap();
    k.locals[acc].mutable = false;
    expect(&k, ErrorKind::Immutable, "immutable variable `acc`");
    let mut k = kernel();
    edit(&mut k, &is_buffer_store, |s| {
        if let StmtKind::Store { place, .. } = s {
            *place = Place::Buffer(ParamId(0));
        }
    });
    expect(&k, ErrorKind::Immutable, "cannot store into `x`: it is read-only");
}

/// `base` plus `let mut w = [0u32; 4]; load_words(w, 0, <src>, 0, <words>);` built by
/// hand, with the array's element type `elem`.
fn with_load_words(src: Place, words: u32, elem: Scalar) -> Kernel {
    let mut k = kernel();
    let w = VarId(k.locals.len() as u32);
    k.locals.push(LocalDecl { name: "w".into(), ty: VarType::Array { elem, len: 4 }, mutable: true });
    let zero = |ty: Scalar| Expr {
        kind: ExprKind::Lit(match ty {
            Scalar::F32 => Literal::f32(0.0),
            _ => Literal::U32(0),
        }),
        ty,
        span: SpanId::NONE,
    };
    let fill = Init::Array(ArrayInit::Fill(zero(elem)));
    k.body.insert(0, Stmt { kind: StmtKind::Let { var: w, init: Some(fill) }, span: SpanId::NONE });
    let load = StmtKind::LoadWords { dst: w, dst_index: zero(Scalar::U32), src, src_index: zero(Scalar::U32), words };
    k.body.insert(1, Stmt { kind: load, span: SpanId::NONE });
    k
}

#[test]
fn load_words_reads_32_bit_read_only_buffers_into_arrays_of_their_type() {
    let buffer = |p: u32| Place::Buffer(ParamId(p));
    // The negative control: f32 words of the read-only `x` into an f32 array.
    assert!(errors(&with_load_words(buffer(0), 4, Scalar::F32)).is_empty(), "{:#?}", errors(&with_load_words(buffer(0), 4, Scalar::F32)));
    assert!(errors(&with_load_words(buffer(0), 2, Scalar::F32)).is_empty());
    expect(&with_load_words(buffer(0), 3, Scalar::F32), ErrorKind::Unsupported, "`load_words` loads 2 or 4 elements, not 3");
    expect(&with_load_words(buffer(1), 4, Scalar::F32), ErrorKind::Unsupported, "`load_words` reads read-only buffers; `y` is `&mut [f32]`");
    expect(&with_load_words(buffer(0), 4, Scalar::U32), ErrorKind::Type, "`w` holds u32, buffer `x` holds f32");
    expect(&with_load_words(buffer(2), 4, Scalar::F32), ErrorKind::Type, "`load_words` reads a buffer; `n` is a scalar parameter");
}

/// `base` plus `let mut w = [<elem>; 4]; store_words(<dst>, 0, w, 0, <words>);` built
/// by hand.
fn with_store_words(dst: u32, words: u32, elem: Scalar) -> Kernel {
    let mut k = with_load_words(Place::Buffer(ParamId(0)), 2, elem);
    let w = VarId(k.locals.len() as u32 - 1);
    let zero = Expr { kind: ExprKind::Lit(Literal::U32(0)), ty: Scalar::U32, span: SpanId::NONE };
    let store = StmtKind::StoreWords { dst: ParamId(dst), dst_index: zero.clone(), src: w, src_index: zero, words };
    // After the load (the statement at 1), which `elem` other than f32 makes invalid:
    // replaced by the store alone.
    k.body[1] = Stmt { kind: store, span: SpanId::NONE };
    k
}

#[test]
fn store_words_writes_32_bit_writable_buffers_from_arrays_of_their_type() {
    // The negative control: f32 words of an f32 array into the writable `y`.
    assert!(errors(&with_store_words(1, 4, Scalar::F32)).is_empty(), "{:#?}", errors(&with_store_words(1, 4, Scalar::F32)));
    assert!(errors(&with_store_words(1, 2, Scalar::F32)).is_empty());
    expect(&with_store_words(1, 3, Scalar::F32), ErrorKind::Unsupported, "`store_words` stores 2 or 4 elements, not 3");
    expect(&with_store_words(0, 4, Scalar::F32), ErrorKind::Type, "`store_words` writes `&mut` buffers; `x` is `&[f32]`");
    expect(&with_store_words(1, 4, Scalar::U32), ErrorKind::Type, "`w` holds u32, buffer `y` holds f32");
    expect(&with_store_words(2, 4, Scalar::F32), ErrorKind::Type, "`store_words` writes a buffer; `n` is a scalar parameter");
}

#[test]
fn load_words_reads_shared_arrays_of_the_array_type_but_not_local_arrays() {
    let shared = Place::Shared(SharedId(0));
    // The negative control: f32 words of the f32 shared array `s` into an f32 array.
    assert!(errors(&with_load_words(shared, 4, Scalar::F32)).is_empty(), "{:#?}", errors(&with_load_words(shared, 4, Scalar::F32)));
    expect(&with_load_words(shared, 4, Scalar::U32), ErrorKind::Type, "`w` holds u32, shared array `s` holds f32");
    expect(&with_load_words(shared, 1, Scalar::F32), ErrorKind::Unsupported, "`load_words` loads 2 or 4 elements, not 1");
    let k = kernel();
    let local = Place::Local(VarId(k.locals.len() as u32));
    expect(&with_load_words(local, 4, Scalar::F32), ErrorKind::Type, "not a local array");
}
