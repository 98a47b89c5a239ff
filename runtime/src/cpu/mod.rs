//! The `cpu` backend: the reference interpreter of DESIGN.md §4.
//!
//! A workgroup executes in lockstep: every statement runs for all active invocations
//! before the next one starts, with divergent branches handled by masks. That gives
//! barriers, shared memory and the reduction tree one defined meaning, and a missing
//! barrier is caught by the shared-memory race detector instead of being hidden by the
//! lockstep order. Workgroups run one after another in linear order (x fastest).
//!
//! Arithmetic follows the table in [`ops`](self) — IEEE-754 binary32 with
//! round-to-nearest-even, subnormals kept, `fma` as one rounding, integers wrapping —
//! and every undefined-on-GPU operation (out-of-bounds access, division by zero,
//! shifts ≥ 32, out-of-range float→int conversion, racing shared-memory accesses) is a
//! reported [`InterpError`], never undefined behaviour or a panic. So is a
//! `last_arrival` protocol broken in a launch: operands that differ, a counter not at 0
//! when the launch first arrives there, more arrivals than the count, or fewer by the
//! end.

mod async_copy;
mod backend;
mod error;
mod machine;
mod ops;
mod shared;

pub use backend::CpuBackend;
pub use error::{Fault, InterpError, Site};

use crate::args::{ArgValue, Args};
use machine::{Binding, DeviceBuffer, Frame, Machine};
use onekernel_dsl::ir::{Access, Determinism, Expr, ExprKind, Kernel, ParamKind, SpanId, VarId};
use onekernel_dsl::mathlib;
use onekernel_dsl::types::Scalar;

/// Limits of one interpreted launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Most iterations one `while` loop may run before it is reported as runaway.
    pub loop_limit: u64,
    /// Workgroups in reverse linear order (x fastest, from the last): a kernel whose
    /// results depend on which workgroup a `last_arrival` chose gives other results.
    pub reversed: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { loop_limit: 1 << 24, reversed: false }
    }
}

/// What a launch did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Interpreted operations: expression nodes, loads, stores and loop steps, each
    /// counted once per active invocation.
    pub ops: u64,
    /// Workgroups executed.
    pub workgroups: u64,
}

/// Runs `kernel` over `groups` workgroups with the default [`RunOptions`]. Read-write
/// buffers in `args` are updated in place.
pub fn run(kernel: &Kernel, args: &mut Args, groups: [u32; 3]) -> Result<RunStats, InterpError> {
    run_with(kernel, args, groups, RunOptions::default())
}

/// [`run`] with explicit options.
pub fn run_with(kernel: &Kernel, args: &mut Args, groups: [u32; 3], opts: RunOptions) -> Result<RunStats, InterpError> {
    onekernel_dsl::validate::validate(kernel).map_err(|errors| InterpError::Invalid { kernel: kernel.name.clone(), errors })?;
    let (bindings, buffers) = bind(kernel, args)?;
    check_lengths(kernel, &bindings, &buffers, groups)?;
    let mut m = Machine::new(kernel, bindings, buffers, groups, opts.loop_limit);
    let mut frame = m.new_frame();
    let total = groups.iter().map(|&g| g as u64).product::<u64>();
    let [gx, gy, _] = groups.map(|g| g as u64);
    for i in 0..total {
        let l = if opts.reversed { total - 1 - i } else { i };
        m.run_group(&mut frame, [(l % gx) as u32, ((l / gx) % gy) as u32, (l / (gx * gy)) as u32])?;
    }
    m.check_arrivals_complete()?;
    let workgroups = total;
    for (p, b) in kernel.params.iter().zip(&m.bindings) {
        if let (ParamKind::Buffer { access: Access::ReadWrite, .. }, Binding::Buffer(i)) = (&p.kind, b) {
            if let Some(host) = args.get_buffer_mut(&p.name) {
                for (j, &v) in m.buffers[*i].vals.iter().enumerate() {
                    host.store_bits(j, v);
                }
            }
        }
    }
    Ok(RunStats { ops: m.ops, workgroups })
}

/// Every buffer at least as long as its `#[len(…)]` declares for this launch.
fn check_lengths(kernel: &Kernel, bindings: &[Binding], buffers: &[DeviceBuffer], groups: [u32; 3]) -> Result<(), InterpError> {
    let param = |p: onekernel_dsl::ir::ParamId| machine::bound_literal(kernel, bindings, p);
    for (p, b) in kernel.params.iter().zip(bindings) {
        if let (ParamKind::Buffer { len: Some(len), .. }, Binding::Buffer(i)) = (&p.kind, b) {
            let err = |message: String| InterpError::Arguments { kernel: kernel.name.clone(), message };
            let need =
                onekernel_dsl::shapes::eval(len, &param, groups, kernel.workgroup).map_err(|m| err(format!("length of buffer `{}`: {m}", p.name)))?;
            let have = buffers[*i].vals.len();
            if (have as u64) < need {
                let text = onekernel_dsl::shapes::text(len, &|q| kernel.params[q.0 as usize].name.clone());
                return Err(err(format!("buffer `{}` has {have} elements but the kernel declares at least {text} = {need} for this launch", p.name)));
            }
        }
    }
    Ok(())
}

fn bind(kernel: &Kernel, args: &Args) -> Result<(Vec<Binding>, Vec<DeviceBuffer>), InterpError> {
    let err = |message: String| InterpError::Arguments { kernel: kernel.name.clone(), message };
    let mut bindings = Vec::new();
    let mut buffers = Vec::new();
    for p in &kernel.params {
        let given = args.get(&p.name);
        match (&p.kind, given) {
            (ParamKind::Buffer { elem, .. }, Some(ArgValue::Buffer(b))) => {
                if b.elem() != *elem {
                    return Err(err(format!("buffer `{}` is declared &[{elem}] but a {} buffer was given", p.name, b.elem())));
                }
                bindings.push(Binding::Buffer(buffers.len()));
                buffers.push(DeviceBuffer { name: p.name.clone(), elem: *elem, vals: b.to_bits() });
            }
            (ParamKind::Buffer { elem, .. }, _) => {
                return Err(err(format!("missing buffer `{}` (&[{elem}])", p.name)));
            }
            (ParamKind::Push { ty }, Some(ArgValue::Scalar(v))) | (ParamKind::Spec { ty, .. }, Some(ArgValue::Scalar(v))) => {
                if v.ty() != *ty {
                    return Err(err(format!("`{}` is {ty} but a {} was given", p.name, v.ty())));
                }
                if let ParamKind::Spec { values: Some(values), .. } = &p.kind {
                    if !values.contains(v) {
                        let list: Vec<String> = values.iter().map(|v| v.to_string()).collect();
                        return Err(err(format!("variant axis `{}` = {v} is not one of [{}]", p.name, list.join(", "))));
                    }
                }
                bindings.push(Binding::Scalar(v.bits()));
            }
            (ParamKind::Spec { default: Some(d), .. }, None) => bindings.push(Binding::Scalar(d.bits())),
            (ParamKind::Push { ty } | ParamKind::Spec { ty, .. }, _) => {
                return Err(err(format!("missing scalar `{}` ({ty})", p.name)));
            }
        }
    }
    Ok((bindings, buffers))
}

/// Evaluates the library function `name` on each row of `inputs` (one slice per
/// argument, all the same length) exactly as a kernel calling it would.
pub fn eval_function(name: &str, inputs: &[&[f32]]) -> Result<Vec<f32>, InterpError> {
    let functions = mathlib::closure([name]);
    let err = |message: String| InterpError::Arguments { kernel: format!("<library {name}>"), message };
    let Some(f) = functions.iter().find(|f| f.name == name) else {
        return Err(err(format!("no library function `{name}`; available: {}", mathlib::names().join(", "))));
    };
    if inputs.len() != f.params.len() {
        return Err(err(format!("`{name}` takes {} arguments, got {}", f.params.len(), inputs.len())));
    }
    let len = inputs.first().map(|i| i.len()).unwrap_or(0);
    if inputs.iter().any(|i| i.len() != len) {
        return Err(err("argument slices differ in length".into()));
    }
    const CHUNK: usize = 4096;
    let lanes_n = len.clamp(1, CHUNK);
    let kernel = Kernel {
        name: format!("<library {name}>"),
        doc: String::new(),
        workgroup: [lanes_n as u32, 1, 1],
        class: Determinism::Exact,
        resident: None,
        params: vec![],
        shared: vec![],
        tiles: vec![],
        locals: f
            .params
            .iter()
            .enumerate()
            .map(|(i, &t)| onekernel_dsl::ir::LocalDecl { name: format!("arg{i}"), ty: onekernel_dsl::types::VarType::Scalar(t), mutable: false })
            .collect(),
        body: vec![],
        functions: functions.clone(),
        spans: vec![],
        source: Default::default(),
    };
    let args: Vec<Expr> = (0..f.params.len()).map(|i| Expr { kind: ExprKind::Var(VarId(i as u32)), ty: Scalar::F32, span: SpanId::NONE }).collect();
    let call = Expr { kind: ExprKind::Call { func: name.into(), args }, ty: f.ret, span: SpanId::NONE };
    let mut m = Machine::new(&kernel, vec![], vec![], [1, 1, 1], RunOptions::default().loop_limit);
    let mut out = Vec::with_capacity(len);
    let mut result = vec![0u32; lanes_n];
    for start in (0..len).step_by(CHUNK) {
        let n = (len - start).min(CHUNK);
        let mut frame = Frame {
            vars: inputs
                .iter()
                .map(|inp| {
                    let mut v: Vec<u32> = inp[start..start + n].iter().map(|x| x.to_bits()).collect();
                    v.resize(lanes_n, 0);
                    v
                })
                .collect(),
            decls: &kernel.locals,
        };
        let lanes: Vec<u16> = (0..n as u16).collect();
        m.eval(&mut frame, &call, &lanes, &mut result)?;
        out.extend(result[..n].iter().map(|&b| f32::from_bits(b)));
    }
    Ok(out)
}
