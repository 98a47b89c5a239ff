//! The lockstep machine: executes one workgroup at a time, every statement for all
//! active invocations together. Each IR node is visited once per statement execution
//! and applied to a whole vector of lanes, so the tree walk is amortized over the
//! workgroup. Divergence is a list of active lanes; `break`, `continue` and `return`
//! park lanes in a per-lane status until their loop or the kernel ends.

mod tile;

use super::async_copy::{AsyncCopies, PendingCopy};
use super::error::{Fault, InterpError, Site};
use super::ops;
use super::shared::SharedArray;
use onekernel_dsl::half::{bf16_to_f32, f16_to_f32, f32_to_bf16, f32_to_f16};
use onekernel_dsl::ir::{
    ArrayInit, BinaryOp, Builtin, Expr, ExprKind, Function, Init, Kernel, LocalDecl, ParamId, Place, ReduceOp, SharedId, SpanId, Stmt, StmtKind,
    VarId,
};
use onekernel_dsl::types::{Scalar, StorageType, VarType};

pub(crate) const RUNNING: u8 = 0;
const BROKE: u8 = 1;
const CONTINUED: u8 = 2;
const RETURNED: u8 = 3;

/// A storage buffer as register values (floats widened), converted on store.
pub(crate) struct DeviceBuffer {
    pub name: String,
    pub elem: StorageType,
    pub vals: Vec<u32>,
}

impl DeviceBuffer {
    /// What a load returns after storing `bits` (the storage type's rounding applied).
    fn narrow(&self, bits: u32) -> u32 {
        match self.elem {
            StorageType::F32 | StorageType::I32 | StorageType::U32 => bits,
            StorageType::F16 => f16_to_f32(f32_to_f16(f32::from_bits(bits))).to_bits(),
            StorageType::Bf16 => bf16_to_f32(f32_to_bf16(f32::from_bits(bits))).to_bits(),
            StorageType::U16 => bits & 0xffff,
            StorageType::U8 => bits & 0xff,
            StorageType::I8 => bits as u8 as i8 as i32 as u32,
        }
    }
}

/// The value a push or spec constant is bound to (`None` for buffers), typed: what
/// length expressions evaluate against.
pub(crate) fn bound_literal(kernel: &Kernel, bindings: &[Binding], p: ParamId) -> Option<onekernel_dsl::types::Literal> {
    let ty = kernel.params.get(p.0 as usize)?.kind.scalar_type()?;
    match bindings.get(p.0 as usize)? {
        Binding::Scalar(bits) => Some(onekernel_dsl::types::Literal::from_bits(ty, *bits)),
        Binding::Buffer(_) => None,
    }
}

/// How a parameter is bound for this launch.
pub(crate) enum Binding {
    Buffer(usize),
    Scalar(u32),
}

/// The storage of one frame's locals: one lane vector per scalar, `lanes × len` per array.
pub(crate) struct Frame<'a> {
    pub vars: Vec<Vec<u32>>,
    pub decls: &'a [LocalDecl],
}

impl Frame<'_> {
    /// Values per invocation of local `var`: an array's length, 1 for a scalar.
    fn slots(&self, var: VarId) -> usize {
        match self.decls[var.0 as usize].ty {
            VarType::Array { len, .. } => len as usize,
            VarType::Scalar(_) => 1,
        }
    }
}

pub(crate) struct Machine<'k> {
    pub kernel: &'k Kernel,
    pub n: usize,
    pub local_ids: [Vec<u32>; 3],
    pub group: [u32; 3],
    pub num_groups: [u32; 3],
    pub bindings: Vec<Binding>,
    pub buffers: Vec<DeviceBuffer>,
    pub shared: Vec<SharedArray>,
    /// Register tiles: per tile, per group of 32 invocations, its 256 values (f16
    /// operands widened exactly), `None` until the group first writes it.
    tiles: Vec<Vec<Option<Vec<f32>>>>,
    /// `tile_mma_panel`s not yet waited for: the tiles they use and the panel words
    /// they read, with the bits read.
    panels: tile::Pending,
    copies: AsyncCopies,
    pub status: Vec<u8>,
    pub epoch: u32,
    exit_events: u64,
    pool: Vec<Vec<u32>>,
    pub ops: u64,
    pub loop_limit: u64,
    /// Library functions being executed, innermost last, with their call sites.
    calls: Vec<(&'k str, SpanId)>,
    /// `last_arrival` counters touched in this launch, by (buffer, index).
    arrivals: std::collections::BTreeMap<(usize, u32), Arrival>,
}

/// One counter's arrivals in a launch.
struct Arrival {
    /// The count the first arrival gave.
    count: u32,
    /// Workgroups arrived so far.
    arrived: u32,
    /// The statement and workgroup of the latest arrival, for the end-of-launch report.
    span: SpanId,
    group: [u32; 3],
}

type R<T> = Result<T, InterpError>;

impl<'k> Machine<'k> {
    pub fn new(kernel: &'k Kernel, bindings: Vec<Binding>, buffers: Vec<DeviceBuffer>, num_groups: [u32; 3], loop_limit: u64) -> Self {
        let [wx, wy, _] = kernel.workgroup;
        let n = kernel.workgroup_invocations() as usize;
        let lin: Vec<u32> = (0..n as u32).collect();
        let local_ids =
            [lin.iter().map(|i| i % wx).collect(), lin.iter().map(|i| (i / wx) % wy).collect(), lin.iter().map(|i| i / (wx * wy)).collect()];
        // Each array as long as this launch's variant declares it.
        let param = |p: ParamId| bound_literal(kernel, &bindings, p);
        let shared = kernel.shared.iter().map(|s| SharedArray::new(&s.name, s.len_for(&param) as usize)).collect();
        Machine {
            kernel,
            n,
            local_ids,
            group: [0; 3],
            num_groups,
            bindings,
            buffers,
            shared,
            tiles: vec![vec![None; n.div_ceil(32)]; kernel.tiles.len()],
            panels: tile::Pending::default(),
            copies: AsyncCopies::new(n),
            status: vec![RUNNING; n],
            epoch: 1,
            exit_events: 0,
            pool: Vec::new(),
            ops: 0,
            loop_limit,
            calls: Vec::new(),
            arrivals: Default::default(),
        }
    }

    pub fn new_frame(&self) -> Frame<'k> {
        let vars = self
            .kernel
            .locals
            .iter()
            .map(|l| match l.ty {
                VarType::Scalar(_) => vec![0; self.n],
                VarType::Array { len, .. } => vec![0; self.n * len as usize],
            })
            .collect();
        Frame { vars, decls: &self.kernel.locals }
    }

    /// Runs the kernel body for workgroup `group`.
    pub fn run_group(&mut self, frame: &mut Frame<'k>, group: [u32; 3]) -> R<()> {
        self.group = group;
        self.status.fill(RUNNING);
        self.epoch = 1;
        for s in &mut self.shared {
            s.reset();
        }
        for t in &mut self.tiles {
            t.iter_mut().for_each(|g| *g = None);
        }
        self.panels = tile::Pending::default();
        self.copies.reset();
        let all: Vec<u16> = (0..self.n as u16).collect();
        self.exec_block(frame, &self.kernel.body, &all)
    }

    fn tmp(&mut self) -> Vec<u32> {
        self.pool.pop().unwrap_or_else(|| vec![0; self.n])
    }

    fn give(&mut self, v: Vec<u32>) {
        self.pool.push(v);
    }

    pub fn fault(&self, span: SpanId, lane: u16, fault: Fault) -> InterpError {
        let (location, function) = match self.calls.first() {
            Some(&(_, site)) => (self.kernel.describe_span(site), self.calls.last().map(|c| c.0.to_string())),
            None => (self.kernel.describe_span(span), None),
        };
        InterpError::Fault {
            site: Box::new(Site { kernel: self.kernel.name.clone(), location, function, group: self.group, invocation: lane as u32 }),
            fault,
        }
    }

    // ---------------------------------------------------------------- statements

    fn exec_block(&mut self, frame: &mut Frame<'k>, stmts: &'k [Stmt], lanes: &[u16]) -> R<()> {
        let mut owned: Option<Vec<u16>> = None;
        for s in stmts {
            let cur = owned.as_deref().unwrap_or(lanes);
            if cur.is_empty() {
                break;
            }
            let before = self.exit_events;
            self.exec_stmt(frame, s, cur)?;
            if self.exit_events != before {
                let status = &self.status;
                let kept: Vec<u16> = cur.iter().copied().filter(|&l| status[l as usize] == RUNNING).collect();
                owned = Some(kept);
            }
        }
        Ok(())
    }

    fn exec_stmt(&mut self, frame: &mut Frame<'k>, s: &'k Stmt, lanes: &[u16]) -> R<()> {
        match &s.kind {
            StmtKind::Let { var, init } => match init {
                None => Ok(()),
                Some(Init::Value(e)) => self.eval_into_var(frame, e, lanes, var.0 as usize),
                Some(Init::Array(a)) => {
                    let len = frame.slots(*var);
                    let elems: Vec<&Expr> = match a {
                        ArrayInit::Fill(e) => vec![e],
                        ArrayInit::Elements(es) => es.iter().collect(),
                    };
                    let mut vals = Vec::with_capacity(elems.len());
                    for e in &elems {
                        let mut t = self.tmp();
                        self.eval(frame, e, lanes, &mut t)?;
                        vals.push(t);
                    }
                    let dst = &mut frame.vars[var.0 as usize];
                    for &l in lanes {
                        let l = l as usize;
                        for i in 0..len {
                            dst[l * len + i] = vals[if vals.len() == 1 { 0 } else { i }][l];
                        }
                    }
                    self.ops += (lanes.len() * len) as u64;
                    for t in vals {
                        self.give(t);
                    }
                    Ok(())
                }
            },
            StmtKind::Assign { var, value } => self.eval_into_var(frame, value, lanes, var.0 as usize),
            StmtKind::Store { place, index, value } => {
                let mut idx = self.tmp();
                let mut val = self.tmp();
                self.eval(frame, index, lanes, &mut idx)?;
                self.eval(frame, value, lanes, &mut val)?;
                let r = self.store(frame, *place, index.ty, s.span, lanes, &idx, &val);
                self.give(idx);
                self.give(val);
                r
            }
            StmtKind::If { cond, then_body, else_body } => {
                let mut c = self.tmp();
                self.eval(frame, cond, lanes, &mut c)?;
                let (t, e): (Vec<u16>, Vec<u16>) = lanes.iter().partition(|&&l| c[l as usize] != 0);
                self.give(c);
                if !t.is_empty() {
                    self.exec_block(frame, then_body, &t)?;
                }
                if !e.is_empty() {
                    self.exec_block(frame, else_body, &e)?;
                }
                Ok(())
            }
            StmtKind::For { var, start, end, step, body, .. } => self.exec_for(frame, s, var.0 as usize, start, end, step, body, lanes),
            StmtKind::While { cond, body } => {
                let mut live = lanes.to_vec();
                let mut c = self.tmp();
                let mut iterations = 0u64;
                loop {
                    self.eval(frame, cond, &live, &mut c)?;
                    live.retain(|&l| c[l as usize] != 0);
                    if live.is_empty() {
                        break;
                    }
                    iterations += 1;
                    if iterations > self.loop_limit {
                        return Err(self.fault(s.span, live[0], Fault::LoopLimit { limit: self.loop_limit }));
                    }
                    self.exec_block(frame, body, &live)?;
                    self.settle_loop_lanes(&mut live);
                }
                self.give(c);
                Ok(())
            }
            StmtKind::Break | StmtKind::Continue | StmtKind::Return => {
                let st = match s.kind {
                    StmtKind::Break => BROKE,
                    StmtKind::Continue => CONTINUED,
                    _ => RETURNED,
                };
                for &l in lanes {
                    self.status[l as usize] = st;
                }
                self.exit_events += 1;
                Ok(())
            }
            StmtKind::Barrier => {
                self.check_all_present(s.span, lanes, "barrier()")?;
                self.epoch += 1;
                Ok(())
            }
            StmtKind::AsyncCopy { dst, dst_index, src, src_index, words, .. } => {
                let (di, si) = self.eval_indices(frame, dst_index, src_index, lanes)?;
                let r = self.start_copies(frame, *dst, *src, *words, s.span, lanes, &di, &si);
                self.give(di);
                self.give(si);
                r
            }
            StmtKind::LoadWords { dst, dst_index, src, src_index, words } => {
                let (di, si) = self.eval_indices(frame, dst_index, src_index, lanes)?;
                let r = self.load_words(frame, *dst, *src, *words, s.span, lanes, &di, &si);
                self.give(di);
                self.give(si);
                r
            }
            StmtKind::StoreWords { dst, dst_index, src, src_index, words } => {
                let (di, si) = self.eval_indices(frame, dst_index, src_index, lanes)?;
                let r = self.store_words(frame, *dst, *src, *words, s.span, lanes, &di, &si);
                self.give(di);
                self.give(si);
                r
            }
            StmtKind::Tile(t) => self.exec_tile(frame, t, s.span, lanes),
            StmtKind::AsyncCommit => {
                for &l in lanes {
                    self.copies.commit(l);
                }
                Ok(())
            }
            StmtKind::AsyncWait { pending } => {
                let epoch = self.epoch;
                for &l in lanes {
                    for c in self.copies.retire(l, *pending) {
                        self.ops += 1;
                        if let Err(f) = self.shared[c.shared].finish_async(c.index, l, epoch, c.value) {
                            return Err(self.fault(s.span, l, f));
                        }
                    }
                }
                Ok(())
            }
            StmtKind::Arrive { var, counters, index, count } => self.arrive(frame, s.span, lanes, var.0 as usize, *counters, index, count),
            StmtKind::Reduce { var, op, value, arg } => {
                self.check_all_present(s.span, lanes, op.dsl_name())?;
                let mut v = self.tmp();
                self.eval(frame, value, lanes, &mut v)?;
                if let Some(a) = arg {
                    let mut ix = self.tmp();
                    self.eval(frame, &a.index, lanes, &mut ix)?;
                    let (r, i) = reduce_pair_tree(*op, value.ty, &mut v[..self.n], &mut ix[..self.n]);
                    frame.vars[var.0 as usize][..self.n].fill(r);
                    frame.vars[a.var.0 as usize][..self.n].fill(i);
                    self.give(ix);
                } else {
                    let r = reduce_tree(*op, value.ty, &mut v[..self.n]);
                    frame.vars[var.0 as usize][..self.n].fill(r);
                }
                self.ops += self.n as u64;
                self.give(v);
                // A reduction synchronizes the workgroup like barrier() (backends
                // implement it with barriers around their scratch memory).
                self.epoch += 1;
                Ok(())
            }
        }
    }

    /// `last_arrival`: the whole workgroup, one counter, one count; the counter moves by
    /// one and goes back to 0 at the last arrival, which alone gets true. Workgroups run
    /// one after another, so the writes of every workgroup before the last are in the
    /// buffers when it reads them.
    #[allow(clippy::too_many_arguments)]
    fn arrive(&mut self, frame: &mut Frame<'k>, span: SpanId, lanes: &[u16], var: usize, counters: ParamId, index: &Expr, count: &Expr) -> R<()> {
        self.check_all_present(span, lanes, "last_arrival")?;
        let mut idx = self.tmp();
        let mut cnt = self.tmp();
        self.eval(frame, index, lanes, &mut idx)?;
        self.eval(frame, count, lanes, &mut cnt)?;
        let uniform = |what: &'static str, v: &[u32]| match v[..self.n].iter().find(|&&x| x != v[0]) {
            Some(&other) => Err(self.fault(span, 0, Fault::ArrivalOperandsDiffer { what, first: v[0], other })),
            None => Ok(v[0]),
        };
        let (i, n) = (uniform("counter index", &idx)?, uniform("count", &cnt)?);
        self.give(idx);
        self.give(cnt);
        let Binding::Buffer(b) = self.bindings[counters.0 as usize] else {
            return Err(self.fault(
                span,
                0,
                Fault::OutOfBounds { target: self.kernel.params[counters.0 as usize].name.clone(), index: i as i64, len: 0 },
            ));
        };
        let name = self.buffers[b].name.clone();
        let len = self.buffers[b].vals.len();
        if i as usize >= len {
            return Err(self.fault(span, 0, Fault::OutOfBounds { target: name, index: i as i64, len }));
        }
        if n == 0 {
            return Err(self.fault(span, 0, Fault::ArrivalCountZero { counters: name, index: i }));
        }
        let value = self.buffers[b].vals[i as usize];
        let group = self.group;
        let state = match self.arrivals.get_mut(&(b, i)) {
            None => {
                if value != 0 {
                    return Err(self.fault(span, 0, Fault::ArrivalCounterNotZero { counters: name, index: i, value }));
                }
                self.arrivals.entry((b, i)).or_insert(Arrival { count: n, arrived: 0, span, group })
            }
            Some(a) => a,
        };
        if state.count != n {
            let earlier = state.count;
            return Err(self.fault(span, 0, Fault::ArrivalCountDiffers { counters: name, index: i, count: n, earlier }));
        }
        if state.arrived == n {
            return Err(self.fault(span, 0, Fault::ArrivalOverflow { counters: name, index: i, count: n }));
        }
        state.arrived += 1;
        state.span = span;
        state.group = group;
        let last = state.arrived == n;
        self.buffers[b].vals[i as usize] = if last { 0 } else { state.arrived };
        frame.vars[var][..self.n].fill(last as u32);
        self.ops += self.n as u64;
        // It synchronizes the workgroup like barrier().
        self.epoch += 1;
        Ok(())
    }

    /// At the end of a launch: every counter it arrived at was completed.
    pub fn check_arrivals_complete(&mut self) -> R<()> {
        if let Some((&(b, i), a)) = self.arrivals.iter().find(|(_, a)| a.arrived < a.count) {
            let fault = Fault::ArrivalIncomplete { counters: self.buffers[b].name.clone(), index: i, arrived: a.arrived, count: a.count };
            self.group = a.group;
            return Err(self.fault(a.span, 0, fault));
        }
        Ok(())
    }

    /// After a loop body: `continue`d lanes run on, `break`/`return` lanes leave.
    fn settle_loop_lanes(&mut self, live: &mut Vec<u16>) {
        let status = &mut self.status;
        live.retain(|&l| {
            let st = &mut status[l as usize];
            match *st {
                CONTINUED => {
                    *st = RUNNING;
                    true
                }
                BROKE => {
                    *st = RUNNING;
                    false
                }
                RETURNED => false,
                _ => true,
            }
        });
    }

    /// Barriers and reductions need every invocation that has not returned — and, for
    /// the stride-halving tree, that is all of them.
    fn check_all_present(&self, span: SpanId, lanes: &[u16], what: &'static str) -> R<()> {
        if lanes.len() != self.n {
            let first_missing = (0..self.n as u16).find(|l| !lanes.contains(l)).unwrap_or(0);
            return Err(self.fault(span, first_missing, Fault::NonUniform { what, active: lanes.len(), expected: self.n }));
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn exec_for(
        &mut self,
        frame: &mut Frame<'k>,
        s: &Stmt,
        var: usize,
        start: &Expr,
        end: &Expr,
        step: &Expr,
        body: &'k [Stmt],
        lanes: &[u16],
    ) -> R<()> {
        let signed = start.ty == Scalar::I32;
        let mut e = self.tmp();
        let mut st = self.tmp();
        // The counter is a fresh local: `start` cannot read it, so evaluate in place.
        let mut init = std::mem::take(&mut frame.vars[var]);
        let r = self.eval(frame, start, lanes, &mut init);
        frame.vars[var] = init;
        r?;
        self.eval(frame, end, lanes, &mut e)?;
        self.eval(frame, step, lanes, &mut st)?;
        for &l in lanes {
            let step = st[l as usize];
            if step == 0 || (signed && (step as i32) < 0) {
                return Err(self.fault(s.span, l, Fault::ZeroStep));
            }
        }
        let below = |i: u32, e: u32| if signed { (i as i32) < (e as i32) } else { i < e };
        let mut live: Vec<u16> = lanes.to_vec();
        loop {
            {
                let iv = &frame.vars[var];
                live.retain(|&l| below(iv[l as usize], e[l as usize]));
            }
            if live.is_empty() {
                break;
            }
            self.exec_block(frame, body, &live)?;
            self.settle_loop_lanes(&mut live);
            // Advance; a counter that would overflow ends its lane's loop (as Rust's
            // `step_by` does) instead of wrapping around.
            let iv = &mut frame.vars[var];
            live.retain(|&l| {
                let l = l as usize;
                let next = if signed { (iv[l] as i32).checked_add(st[l] as i32).map(|v| v as u32) } else { iv[l].checked_add(st[l]) };
                match next {
                    Some(v) => {
                        iv[l] = v;
                        true
                    }
                    None => false,
                }
            });
            self.ops += live.len() as u64;
        }
        self.give(e);
        self.give(st);
        Ok(())
    }

    fn eval_into_var(&mut self, frame: &mut Frame<'k>, e: &Expr, lanes: &[u16], var: usize) -> R<()> {
        // Evaluate into a temporary: the expression may read the variable it assigns.
        let mut t = self.tmp();
        self.eval(frame, e, lanes, &mut t)?;
        let dst = &mut frame.vars[var];
        for &l in lanes {
            dst[l as usize] = t[l as usize];
        }
        self.give(t);
        Ok(())
    }

    // ---------------------------------------------------------------- memory

    /// Bounds-checks an index; the place's name is only looked up for the error report,
    /// so the hot path allocates nothing.
    #[allow(clippy::too_many_arguments)]
    fn index_of(&self, frame: &Frame, place: Place, span: SpanId, lane: u16, raw: u32, signed: bool, len: usize) -> R<usize> {
        let index = if signed { raw as i32 as i64 } else { raw as i64 };
        if index < 0 || index as usize >= len {
            let target = self.place_name(frame, place);
            return Err(self.fault(span, lane, Fault::OutOfBounds { target, index, len }));
        }
        Ok(index as usize)
    }

    fn place_name(&self, frame: &Frame, place: Place) -> String {
        match place {
            Place::Buffer(p) => self.kernel.params[p.0 as usize].name.clone(),
            Place::Local(v) => frame.decls[v.0 as usize].name.clone(),
            Place::Shared(s) => self.kernel.shared[s.0 as usize].name.clone(),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn store(&mut self, frame: &mut Frame<'k>, place: Place, index_ty: Scalar, span: SpanId, lanes: &[u16], idx: &[u32], val: &[u32]) -> R<()> {
        let signed = index_ty == Scalar::I32;
        self.ops += lanes.len() as u64;
        match place {
            Place::Buffer(p) => {
                let Binding::Buffer(b) = self.bindings[p.0 as usize] else { return Ok(()) };
                let len = self.buffers[b].vals.len();
                for &l in lanes {
                    let i = self.index_of(frame, place, span, l, idx[l as usize], signed, len)?;
                    let v = self.buffers[b].narrow(val[l as usize]);
                    self.buffers[b].vals[i] = v;
                }
            }
            Place::Local(v) => {
                let len = frame.slots(v);
                for &l in lanes {
                    let i = self.index_of(frame, place, span, l, idx[l as usize], signed, len)?;
                    frame.vars[v.0 as usize][l as usize * len + i] = val[l as usize];
                }
            }
            Place::Shared(sid) => {
                let sh = sid.0 as usize;
                let len = self.shared[sh].len();
                for &l in lanes {
                    let i = self.index_of(frame, place, span, l, idx[l as usize], signed, len)?;
                    let epoch = self.epoch;
                    if let Err(f) = self.shared[sh].write(i, l, epoch, val[l as usize]) {
                        return Err(self.fault(span, l, f));
                    }
                }
            }
        }
        Ok(())
    }

    /// A buffer transfer's destination and source indices, per lane, in scratch vectors
    /// the caller gives back.
    fn eval_indices(&mut self, frame: &mut Frame<'k>, dst_index: &Expr, src_index: &Expr, lanes: &[u16]) -> R<(Vec<u32>, Vec<u32>)> {
        let mut di = self.tmp();
        let mut si = self.tmp();
        let r = self.eval(frame, dst_index, lanes, &mut di).and_then(|_| self.eval(frame, src_index, lanes, &mut si));
        if let Err(e) = r {
            self.give(di);
            self.give(si);
            return Err(e);
        }
        Ok((di, si))
    }

    /// `async_copy`: reads the source now and marks the destination cells pending
    /// until the invocation's `async_wait` (see `async_copy.rs`).
    #[allow(clippy::too_many_arguments)]
    fn start_copies(&mut self, frame: &Frame, dst: SharedId, src: ParamId, words: u32, span: SpanId, lanes: &[u16], di: &[u32], si: &[u32]) -> R<()> {
        let sh = dst.0 as usize;
        let Binding::Buffer(b) = self.bindings[src.0 as usize] else { return Ok(()) };
        let (src_len, dst_len) = (self.buffers[b].vals.len(), self.shared[sh].len());
        let epoch = self.epoch;
        for &l in lanes {
            let (d0, s0) = (di[l as usize], si[l as usize]);
            if d0 % words != 0 || s0 % words != 0 {
                return Err(self.fault(span, l, Fault::MisalignedCopy { words, dst: d0, src: s0 }));
            }
            for w in 0..words as u64 {
                let (d, s) = (d0 as u64 + w, s0 as u64 + w);
                if s >= src_len as u64 {
                    let target = self.buffers[b].name.clone();
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: s as i64, len: src_len }));
                }
                if d >= dst_len as u64 {
                    let target = self.place_name(frame, Place::Shared(dst));
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: d as i64, len: dst_len }));
                }
                if let Err(f) = self.shared[sh].start_async(d as usize, l, epoch) {
                    return Err(self.fault(span, l, f));
                }
                let value = self.buffers[b].vals[s as usize];
                self.copies.start(l, PendingCopy { shared: sh, index: d as usize, value });
            }
        }
        self.ops += (lanes.len() * words as usize) as u64;
        Ok(())
    }

    /// `load_words`: `words` consecutive elements of a buffer into a local array, the
    /// source index checked for the alignment the backends' vector loads need.
    #[allow(clippy::too_many_arguments)]
    fn load_words(
        &mut self,
        frame: &mut Frame<'k>,
        dst: VarId,
        src: Place,
        words: u32,
        span: SpanId,
        lanes: &[u16],
        di: &[u32],
        si: &[u32],
    ) -> R<()> {
        // The source resolved once: (bound buffer, or shared array index) and its length.
        let (buffer, shared, src_len) = match src {
            Place::Buffer(p) => match self.bindings[p.0 as usize] {
                Binding::Buffer(b) => (Some(b), None, self.buffers[b].vals.len()),
                _ => return Ok(()),
            },
            Place::Shared(sh) => (None, Some(sh.0 as usize), self.shared[sh.0 as usize].len()),
            Place::Local(_) => return Ok(()),
        };
        let dst_len = frame.slots(dst);
        let epoch = self.epoch;
        for &l in lanes {
            let (d0, s0) = (di[l as usize] as u64, si[l as usize]);
            if s0 % words != 0 {
                return Err(self.fault(span, l, Fault::MisalignedLoad { words, src: s0 }));
            }
            for w in 0..words as u64 {
                let (d, s) = (d0 + w, s0 as u64 + w);
                if s >= src_len as u64 {
                    let target = self.place_name(frame, src);
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: s as i64, len: src_len }));
                }
                if d >= dst_len as u64 {
                    let target = self.place_name(frame, Place::Local(dst));
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: d as i64, len: dst_len }));
                }
                let value = match (buffer, shared) {
                    (Some(b), _) => self.buffers[b].vals[s as usize],
                    // A shared read, with the race and initialization checks of any other.
                    (None, Some(sh)) => match self.shared[sh].read(s as usize, l, epoch) {
                        Ok(v) => v,
                        Err(f) => return Err(self.fault(span, l, f)),
                    },
                    (None, None) => 0,
                };
                frame.vars[dst.0 as usize][l as usize * dst_len + d as usize] = value;
            }
        }
        self.ops += (lanes.len() * words as usize) as u64;
        Ok(())
    }

    /// `store_words`: `words` consecutive elements of a local array into a buffer, the
    /// destination index checked for the alignment the backends' vector stores need.
    #[allow(clippy::too_many_arguments)]
    fn store_words(
        &mut self,
        frame: &mut Frame<'k>,
        dst: ParamId,
        src: VarId,
        words: u32,
        span: SpanId,
        lanes: &[u16],
        di: &[u32],
        si: &[u32],
    ) -> R<()> {
        let Binding::Buffer(b) = self.bindings[dst.0 as usize] else { return Ok(()) };
        let dst_len = self.buffers[b].vals.len();
        let src_len = frame.slots(src);
        for &l in lanes {
            let (d0, s0) = (di[l as usize], si[l as usize] as u64);
            if d0 % words != 0 {
                return Err(self.fault(span, l, Fault::MisalignedStore { words, dst: d0 }));
            }
            for w in 0..words as u64 {
                let (d, s) = (d0 as u64 + w, s0 + w);
                if s >= src_len as u64 {
                    let target = self.place_name(frame, Place::Local(src));
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: s as i64, len: src_len }));
                }
                if d >= dst_len as u64 {
                    let target = self.place_name(frame, Place::Buffer(dst));
                    return Err(self.fault(span, l, Fault::OutOfBounds { target, index: d as i64, len: dst_len }));
                }
                let v = self.buffers[b].narrow(frame.vars[src.0 as usize][l as usize * src_len + s as usize]);
                self.buffers[b].vals[d as usize] = v;
            }
        }
        self.ops += (lanes.len() * words as usize) as u64;
        Ok(())
    }

    fn load(&mut self, frame: &Frame, place: Place, e: &Expr, lanes: &[u16], idx: &[u32], out: &mut [u32]) -> R<()> {
        let signed = match &e.kind {
            ExprKind::Index { index, .. } => index.ty == Scalar::I32,
            _ => false,
        };
        self.ops += lanes.len() as u64;
        match place {
            Place::Buffer(p) => {
                let Binding::Buffer(b) = self.bindings[p.0 as usize] else { return Ok(()) };
                let buf = &self.buffers[b];
                let len = buf.vals.len();
                for &l in lanes {
                    let raw = idx[l as usize];
                    let i = if signed { raw as i32 as i64 } else { raw as i64 };
                    if i < 0 || i as usize >= len {
                        return Err(self.fault(e.span, l, Fault::OutOfBounds { target: buf.name.clone(), index: i, len }));
                    }
                    out[l as usize] = buf.vals[i as usize];
                }
            }
            Place::Local(v) => {
                let len = frame.slots(v);
                for &l in lanes {
                    let i = self.index_of(frame, place, e.span, l, idx[l as usize], signed, len)?;
                    out[l as usize] = frame.vars[v.0 as usize][l as usize * len + i];
                }
            }
            Place::Shared(sid) => {
                let sh = sid.0 as usize;
                let len = self.shared[sh].len();
                for &l in lanes {
                    let i = self.index_of(frame, place, e.span, l, idx[l as usize], signed, len)?;
                    let epoch = self.epoch;
                    match self.shared[sh].read(i, l, epoch) {
                        Ok(v) => out[l as usize] = v,
                        Err(f) => return Err(self.fault(e.span, l, f)),
                    }
                }
            }
        }
        Ok(())
    }

    // ---------------------------------------------------------------- expressions

    /// Evaluates `e` for `lanes`, writing `out[lane]`.
    pub fn eval(&mut self, frame: &mut Frame<'k>, e: &Expr, lanes: &[u16], out: &mut [u32]) -> R<()> {
        self.ops += lanes.len() as u64;
        match &e.kind {
            ExprKind::Lit(l) => {
                let b = l.bits();
                for &l in lanes {
                    out[l as usize] = b;
                }
            }
            ExprKind::Var(v) => {
                let src = &frame.vars[v.0 as usize];
                for &l in lanes {
                    out[l as usize] = src[l as usize];
                }
            }
            ExprKind::Param(p) => {
                let b = match self.bindings[p.0 as usize] {
                    Binding::Scalar(b) => b,
                    Binding::Buffer(_) => 0,
                };
                for &l in lanes {
                    out[l as usize] = b;
                }
            }
            ExprKind::Builtin { builtin, axis } => {
                let a = *axis as usize;
                let wg = self.kernel.workgroup[a];
                match builtin {
                    Builtin::LocalId => {
                        for &l in lanes {
                            out[l as usize] = self.local_ids[a][l as usize];
                        }
                    }
                    Builtin::GlobalId => {
                        let base = self.group[a].wrapping_mul(wg);
                        for &l in lanes {
                            out[l as usize] = base.wrapping_add(self.local_ids[a][l as usize]);
                        }
                    }
                    Builtin::GroupId | Builtin::NumGroups | Builtin::WorkgroupSize => {
                        let v = match builtin {
                            Builtin::GroupId => self.group[a],
                            Builtin::NumGroups => self.num_groups[a],
                            _ => wg,
                        };
                        for &l in lanes {
                            out[l as usize] = v;
                        }
                    }
                }
            }
            ExprKind::Unary(op, a) => {
                let mut t = self.tmp();
                self.eval(frame, a, lanes, &mut t)?;
                ops::unary(*op, a.ty, lanes, &t, out);
                self.give(t);
            }
            ExprKind::Binary(op @ (BinaryOp::And | BinaryOp::Or), a, b) => {
                // Short-circuit: the right side runs only where it decides the result.
                self.eval(frame, a, lanes, out)?;
                let want = (*op == BinaryOp::And) as u32;
                let rest: Vec<u16> = lanes.iter().copied().filter(|&l| out[l as usize] == want).collect();
                if !rest.is_empty() {
                    self.eval(frame, b, &rest, out)?;
                }
            }
            ExprKind::Binary(op, a, b) => {
                let mut ta = self.tmp();
                let mut tb = self.tmp();
                self.eval(frame, a, lanes, &mut ta)?;
                self.eval(frame, b, lanes, &mut tb)?;
                let r = ops::binary(*op, a.ty, b.ty, lanes, &ta, &tb, out);
                self.give(ta);
                self.give(tb);
                r.map_err(|(l, f)| self.fault(e.span, l, f))?;
            }
            ExprKind::Index { place, index } => {
                let mut t = self.tmp();
                self.eval(frame, index, lanes, &mut t)?;
                let r = self.load(frame, *place, e, lanes, &t, out);
                self.give(t);
                r?;
            }
            ExprKind::Select(c, a, b) => {
                let mut tc = self.tmp();
                let mut tb = self.tmp();
                self.eval(frame, c, lanes, &mut tc)?;
                self.eval(frame, a, lanes, out)?;
                self.eval(frame, b, lanes, &mut tb)?;
                for &l in lanes {
                    let l = l as usize;
                    if tc[l] == 0 {
                        out[l] = tb[l];
                    }
                }
                self.give(tc);
                self.give(tb);
            }
            ExprKind::Cast(a) => {
                let mut t = self.tmp();
                self.eval(frame, a, lanes, &mut t)?;
                let r = ops::cast(a.ty, e.ty, lanes, &t, out);
                self.give(t);
                r.map_err(|(l, f)| self.fault(e.span, l, f))?;
            }
            ExprKind::BitCast(a) => self.eval(frame, a, lanes, out)?,
            ExprKind::Intrinsic(op, args) => {
                let mut ts = Vec::with_capacity(args.len());
                for a in args {
                    let mut t = self.tmp();
                    self.eval(frame, a, lanes, &mut t)?;
                    ts.push(t);
                }
                let refs: Vec<&[u32]> = ts.iter().map(|t| t.as_slice()).collect();
                ops::intrinsic(*op, args[0].ty, lanes, &refs, out);
                for t in ts {
                    self.give(t);
                }
            }
            ExprKind::Call { func, args } => {
                let Some(f) = self.kernel.functions.iter().find(|f| &f.name == func) else {
                    return Ok(());
                };
                self.call(frame, f, args, e.span, lanes, out)?;
            }
        }
        Ok(())
    }

    fn call(&mut self, frame: &mut Frame<'k>, f: &'k Function, args: &[Expr], span: SpanId, lanes: &[u16], out: &mut [u32]) -> R<()> {
        let mut callee = Frame { vars: Vec::with_capacity(f.locals.len()), decls: &f.locals };
        for a in args {
            let mut t = self.tmp();
            self.eval(frame, a, lanes, &mut t)?;
            callee.vars.push(t);
        }
        while callee.vars.len() < f.locals.len() {
            let t = self.tmp();
            callee.vars.push(t);
        }
        self.calls.push((&f.name, span));
        let mut result = Ok(());
        for s in &f.body {
            if let StmtKind::Let { var, init: Some(Init::Value(v)) } = &s.kind {
                result = self.eval_into_var(&mut callee, v, lanes, var.0 as usize);
                if result.is_err() {
                    break;
                }
            }
        }
        if result.is_ok() {
            result = self.eval(&mut callee, &f.result, lanes, out);
        }
        self.calls.pop();
        for v in callee.vars {
            self.give(v);
        }
        result
    }
}

/// The pair tree of `workgroup_argmax` / `argmin`: the same pairing as [`reduce_tree`]
/// over (value, index), the pair at `i + stride` replacing the one at `i` when its value
/// is larger (smaller), or equal with a smaller index; a NaN never replaces and is never
/// replaced. Returns the winning value and index.
pub(crate) fn reduce_pair_tree(op: ReduceOp, ty: Scalar, v: &mut [u32], ix: &mut [u32]) -> (u32, u32) {
    let wins = |b: u32, a: u32| -> bool {
        match (op, ty) {
            (ReduceOp::Max, Scalar::F32) => f32::from_bits(b) > f32::from_bits(a),
            (ReduceOp::Min, Scalar::F32) => f32::from_bits(b) < f32::from_bits(a),
            (ReduceOp::Max, Scalar::I32) => (b as i32) > (a as i32),
            (ReduceOp::Min, Scalar::I32) => (b as i32) < (a as i32),
            (ReduceOp::Max, _) => b > a,
            (ReduceOp::Min, _) => b < a,
            (ReduceOp::Sum, _) => false,
        }
    };
    let equal = |a: u32, b: u32| if ty == Scalar::F32 { f32::from_bits(a) == f32::from_bits(b) } else { a == b };
    let mut stride = v.len() / 2;
    while stride > 0 {
        for i in 0..stride {
            let (a, b) = (i, i + stride);
            if wins(v[b], v[a]) || (equal(v[b], v[a]) && ix[b] < ix[a]) {
                v[a] = v[b];
                ix[a] = ix[b];
            }
        }
        stride /= 2;
    }
    (v[0], ix[0])
}

/// The fixed stride-halving tree: `v[i] = v[i] ∘ v[i + stride]` for stride = n/2 … 1.
/// Every backend lowers workgroup reductions to exactly this pairing.
pub(crate) fn reduce_tree(op: ReduceOp, ty: Scalar, v: &mut [u32]) -> u32 {
    let combine = |a: u32, b: u32| -> u32 {
        match (op, ty) {
            (ReduceOp::Sum, Scalar::F32) => (f32::from_bits(a) + f32::from_bits(b)).to_bits(),
            (ReduceOp::Sum, _) => a.wrapping_add(b),
            (ReduceOp::Max, Scalar::F32) => {
                if f32::from_bits(a) > f32::from_bits(b) {
                    a
                } else {
                    b
                }
            }
            (ReduceOp::Max, Scalar::I32) => {
                if (a as i32) > (b as i32) {
                    a
                } else {
                    b
                }
            }
            (ReduceOp::Max, _) => a.max(b),
            (ReduceOp::Min, Scalar::F32) => {
                if f32::from_bits(a) < f32::from_bits(b) {
                    a
                } else {
                    b
                }
            }
            (ReduceOp::Min, Scalar::I32) => {
                if (a as i32) < (b as i32) {
                    a
                } else {
                    b
                }
            }
            (ReduceOp::Min, _) => a.min(b),
        }
    };
    let mut stride = v.len() / 2;
    while stride > 0 {
        for i in 0..stride {
            v[i] = combine(v[i], v[i + stride]);
        }
        stride /= 2;
    }
    v[0]
}
