//! Uniformity analysis: `barrier()` and workgroup reductions must be reached by every
//! invocation of the workgroup, so they may only appear where control flow is uniform.
//!
//! A value is uniform when every invocation of a workgroup is certain to hold the same
//! one: literals, push and spec parameters, `group_id`, `num_groups`, workgroup sizes,
//! reduction results, loads from read-only buffers and from shared memory at a uniform
//! index, and anything computed only from those under uniform control flow. Control flow
//! becomes non-uniform under an `if`/loop condition that is not uniform, after a
//! `return` taken under such a condition, and (for the rest of a loop) after a `break`
//! or `continue` taken under one. The shared-memory rule relies on a barrier having
//! ordered the writes; the interpreter's race detector checks that at run time.

use super::{Diagnostics, ErrorKind};
use crate::ir::{Access, Expr, ExprKind, Kernel, ParamKind, Place, Stmt, StmtKind, VarId};
use crate::visit::walk_stmts;

struct Analysis<'k> {
    kernel: &'k Kernel,
    /// Locals that may differ between invocations.
    varying: Vec<bool>,
    changed: bool,
    /// Report mode: the fixpoint is reached, now emit errors.
    report: bool,
}

pub(super) fn check(k: &Kernel, d: &mut Diagnostics) {
    let mut a = Analysis { kernel: k, varying: vec![false; k.locals.len()], changed: true, report: false };
    // Monotone: each pass can only mark more locals varying, so this terminates.
    while a.changed {
        a.changed = false;
        a.block(&k.body, true, d);
    }
    a.report = true;
    a.block(&k.body, true, d);
}

impl Analysis<'_> {
    fn mark(&mut self, v: VarId) {
        let slot = &mut self.varying[v.0 as usize];
        if !*slot {
            *slot = true;
            self.changed = true;
        }
    }

    fn uniform(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Lit(_) | ExprKind::Param(_) => true,
            ExprKind::Var(v) => !self.varying[v.0 as usize],
            ExprKind::Builtin { builtin, .. } => builtin.is_uniform(),
            ExprKind::Index { place, index } => {
                self.uniform(index)
                    && match place {
                        Place::Buffer(p) => matches!(self.kernel.params[p.0 as usize].kind, ParamKind::Buffer { access: Access::ReadOnly, .. }),
                        Place::Shared(_) => true,
                        Place::Local(v) => !self.varying[v.0 as usize],
                    }
            }
            // Library functions are pure: uniform arguments give a uniform result.
            _ => crate::visit::expr_children(e).into_iter().all(|c| self.uniform(c)),
        }
    }

    /// Walks a block; returns false when some invocations may have returned early under
    /// non-uniform control (so what follows the block is not uniform).
    fn block(&mut self, stmts: &[Stmt], mut uniform: bool, d: &mut Diagnostics) -> bool {
        let mut all_stayed = true;
        for s in stmts {
            if !self.stmt(s, uniform, d) {
                uniform = false;
                all_stayed = false;
            }
        }
        all_stayed
    }

    fn stmt(&mut self, s: &Stmt, uniform: bool, d: &mut Diagnostics) -> bool {
        match &s.kind {
            StmtKind::Let { var, init } => {
                let varying = !uniform
                    || init.as_ref().is_some_and(|i| match i {
                        crate::ir::Init::Value(e) | crate::ir::Init::Array(crate::ir::ArrayInit::Fill(e)) => !self.uniform(e),
                        crate::ir::Init::Array(crate::ir::ArrayInit::Elements(es)) => es.iter().any(|e| !self.uniform(e)),
                    });
                if varying {
                    self.mark(*var);
                }
                true
            }
            StmtKind::Assign { var, value } => {
                if !uniform || !self.uniform(value) {
                    self.mark(*var);
                }
                true
            }
            StmtKind::Store { place, index, value } => {
                if let Place::Local(v) = place {
                    if !uniform || !self.uniform(index) || !self.uniform(value) {
                        self.mark(*v);
                    }
                }
                true
            }
            StmtKind::LoadWords { dst, dst_index, src, src_index, .. } => {
                // Shared memory is written by the workgroup's invocations: varying.
                let read_only = match src {
                    Place::Buffer(p) => matches!(self.kernel.params[p.0 as usize].kind, ParamKind::Buffer { access: Access::ReadOnly, .. }),
                    _ => false,
                };
                if !uniform || !self.uniform(dst_index) || !self.uniform(src_index) || !read_only {
                    self.mark(*dst);
                }
                true
            }
            // Per-invocation operations: nothing to synchronize, no local written.
            StmtKind::AsyncCopy { .. } | StmtKind::StoreWords { .. } | StmtKind::AsyncCommit | StmtKind::AsyncWait { .. } => true,
            // Collective over a group of 32 invocations, not over the workgroup: that the
            // group reaches it together with equal operands is a property of the values
            // (warp indices), which the interpreter checks at run time. The slots it
            // writes differ between invocations.
            StmtKind::Tile(t) => {
                for v in t.locals_written() {
                    self.mark(v);
                }
                true
            }
            StmtKind::If { cond, then_body, else_body } => {
                let inner = uniform && self.uniform(cond);
                let t = self.block(then_body, inner, d);
                let e = self.block(else_body, inner, d);
                if !uniform {
                    true
                } else if !inner {
                    // A `return` under a varying condition leaves the rest varying.
                    !contains_return(then_body) && !contains_return(else_body)
                } else {
                    t && e
                }
            }
            StmtKind::For { var, start, end, step, body, .. } => {
                let mut inner = uniform && self.uniform(start) && self.uniform(end) && self.uniform(step);
                if inner && self.diverging_exit(body) {
                    inner = false;
                }
                if !inner {
                    self.mark(*var);
                }
                self.loop_body(body, inner, d);
                !(uniform && !inner && contains_return(body))
            }
            StmtKind::While { cond, body } => {
                let mut inner = uniform && self.uniform(cond);
                if inner && self.diverging_exit(body) {
                    inner = false;
                }
                self.loop_body(body, inner, d);
                // The condition is re-evaluated with values the body changed: if any of
                // them became varying, later iterations are not uniform either.
                !(uniform && !inner && contains_return(body))
            }
            StmtKind::Break | StmtKind::Continue => true,
            StmtKind::Return => uniform,
            StmtKind::Barrier => {
                if !uniform && self.report {
                    d.error(
                        s.span,
                        ErrorKind::NonUniform,
                        "`barrier()` in non-uniform control flow: every invocation of the workgroup \
                         must reach it (move it out of branches and loops whose condition depends \
                         on local_id/global_id, varying loads, or follows a varying early return)",
                    );
                }
                true
            }
            StmtKind::Arrive { var, index, count, .. } => {
                if self.report {
                    if !uniform {
                        d.error(
                            s.span,
                            ErrorKind::NonUniform,
                            "`last_arrival` in non-uniform control flow: every invocation of the workgroup \
                             must reach it (it is also a barrier)",
                        );
                    }
                    for (what, e) in [("counter index", index), ("count", count)] {
                        if !self.uniform(e) {
                            d.error(
                                e.span,
                                ErrorKind::NonUniform,
                                format!("the {what} of `last_arrival` differs between invocations: the workgroup arrives once, at one counter"),
                            );
                        }
                    }
                }
                if !uniform {
                    self.mark(*var);
                }
                true
            }
            StmtKind::Reduce { var, op, arg, .. } => {
                if !uniform {
                    if self.report {
                        d.error(
                            s.span,
                            ErrorKind::NonUniform,
                            format!(
                                "`{}` in non-uniform control flow: every invocation of the workgroup \
                             must take part (compute the contribution under the branch, reduce \
                             outside it)",
                                op.dsl_name()
                            ),
                        );
                    }
                    self.mark(*var);
                    if let Some(a) = arg {
                        self.mark(a.var);
                    }
                }
                true
            }
        }
    }

    fn loop_body(&mut self, body: &[Stmt], inner: bool, d: &mut Diagnostics) {
        // Analyse twice so values carried around the back edge are seen varying.
        let before = self.varying.clone();
        self.block(body, inner, d);
        if self.varying != before {
            self.block(body, inner, d);
        }
    }

    /// Whether a loop body can leave an iteration early under a varying condition.
    fn diverging_exit(&self, body: &[Stmt]) -> bool {
        fn walk(a: &Analysis, stmts: &[Stmt], under_varying: bool, depth: u32) -> bool {
            stmts.iter().any(|s| match &s.kind {
                StmtKind::Break | StmtKind::Continue => under_varying && depth == 0,
                StmtKind::Return => under_varying,
                StmtKind::If { cond, then_body, else_body } => {
                    let v = under_varying || !a.uniform(cond);
                    walk(a, then_body, v, depth) || walk(a, else_body, v, depth)
                }
                StmtKind::For { body, .. } | StmtKind::While { body, .. } => walk(a, body, under_varying, depth + 1),
                _ => false,
            })
        }
        walk(self, body, false, 0)
    }
}

fn contains_return(stmts: &[Stmt]) -> bool {
    let mut found = false;
    walk_stmts(stmts, &mut |s| found |= matches!(s.kind, StmtKind::Return));
    found
}
