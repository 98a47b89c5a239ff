//! Register tiles in the interpreter: the reference meaning of every `tile_*` operation.
//!
//! Each aligned group of 32 invocations owns one copy of every tile, 16 × 16 values
//! (f16 operands widened exactly to f32). An operation is computed once per group that
//! reaches it, with the operands its invocations passed: all 32 must be there and agree,
//! as the hardware instructions need the whole warp (or subgroup, or SIMD group).
//!
//! `tile_mma` is the rule every backend is measured against: each accumulator becomes
//! its old value plus the 16 products, summed in f64 (every product of two f16 values is
//! exact in f64) in order of the inner index, rounded once to f32. Tensor cores sum in
//! their own order and precision, which is why a kernel using tiles is `fast`.
//! `tile_scale` is one f32 multiplication per value; loads and stores move bits.
//!
//! Element access (`tile_get`, `tile_set`, `tile_coords`, the slot reductions) holds each
//! invocation's 8 slots in CUDA's fragment order ([`LAYOUT`]); the backends that go
//! through a scratch use another, so a kernel that assumes one fails on some backend.
//! `tile_get` and `tile_set` write the scratch as those backends do, for the race
//! detector; `tile_set` of an A operand rounds to f16 (nearest even); `tile_row_sum`
//! sums in f64 in column order, rounded once.

use super::{Binding, Frame, Machine, R};
use crate::cpu::error::Fault;
use crate::cpu::shared::GROUP;
use onekernel_dsl::half::{f16_to_f32, f32_to_f16};
use onekernel_dsl::ir::{panel_word, Place, SlotLayout, SpanId, TileId, TileOp, TileReduce, TileRole, TILE_DIM, TILE_SLOTS};

/// Values of one tile.
const VALUES: usize = (TILE_DIM * TILE_DIM) as usize;

/// Slots per invocation, as an index.
const SLOTS: usize = TILE_SLOTS as usize;

/// The interpreter's slots: CUDA's, while the backends that go through a scratch use the
/// other layout, so that a kernel depending on one fails somewhere.
const LAYOUT: SlotLayout = SlotLayout::Fragments;

impl<'k> Machine<'k> {
    /// Runs one tile operation for every group of 32 among `lanes`.
    pub(super) fn exec_tile(&mut self, frame: &mut Frame<'k>, t: &TileOp, span: SpanId, lanes: &[u16]) -> R<()> {
        let first = lanes.first().copied().unwrap_or(0);
        match t {
            TileOp::PanelWait => {
                if lanes.len() != self.n {
                    return Err(self.fault(span, first, Fault::NonUniform { what: t.name(), active: lanes.len(), expected: self.n }));
                }
                return self.panel_wait(span, first);
            }
            TileOp::PanelMma { .. } => {}
            _ => {
                if let Some(&tile) = t.tiles().iter().find(|id| self.panels.tiles.contains(id)) {
                    let fault = Fault::TilePending { op: t.name(), tile: self.kernel.tiles[tile.0 as usize].name.clone() };
                    return Err(self.fault(span, first, fault));
                }
            }
        }
        let mut vals: Vec<Vec<u32>> = Vec::new();
        let mut result = Ok(());
        for e in t.exprs() {
            let mut v = self.tmp();
            result = self.eval(frame, e, lanes, &mut v);
            vals.push(v);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = match t {
                TileOp::PanelMma { .. } => self.panel_mma(t, span, lanes, &vals),
                _ => self.tile_groups(frame, t, span, lanes, &vals),
            };
        }
        for v in vals {
            self.give(v);
        }
        result
    }

    /// Splits the active lanes (ascending) into groups of 32, checks that each group is
    /// whole and passes one set of operands, and runs the operation for it.
    fn tile_groups(&mut self, frame: &mut Frame<'k>, t: &TileOp, span: SpanId, lanes: &[u16], vals: &[Vec<u32>]) -> R<()> {
        let op = t.name();
        let names: &[&'static str] = match t {
            TileOp::Fill { .. } | TileOp::Scale { .. } => &["value"],
            _ => &["index", "stride"],
        };
        let mut i = 0;
        while i < lanes.len() {
            let group = lanes[i] as usize / 32;
            let members = lanes[i..].iter().take_while(|&&l| l as usize / 32 == group).count();
            let first = lanes[i];
            if members != 32 {
                return Err(self.fault(span, first, Fault::TilePartialGroup { op, group, active: members }));
            }
            let mut ops = [0u32; 2];
            for (o, v) in vals.iter().enumerate() {
                ops[o] = v[first as usize];
                if let Some(&l) = lanes[i..i + members].iter().find(|&&l| v[l as usize] != ops[o]) {
                    let fault = Fault::TileOperandsDiffer { op, group, operand: names[o], first: ops[o], other: v[l as usize] };
                    return Err(self.fault(span, l, fault));
                }
            }
            self.tile_group(frame, t, span, first, group, ops)?;
            i += members;
        }
        Ok(())
    }

    /// The operation for one group, whose first invocation is `lane`.
    fn tile_group(&mut self, frame: &mut Frame<'k>, t: &TileOp, span: SpanId, lane: u16, group: usize, ops: [u32; 2]) -> R<()> {
        let op = t.name();
        match *t {
            TileOp::Fill { tile, .. } => {
                self.tiles[tile.0 as usize][group] = Some(vec![f32::from_bits(ops[0]); VALUES]);
            }
            TileOp::Scale { tile, .. } => {
                let s = f32::from_bits(ops[0]);
                let mut v = self.tile_values(tile, op, span, lane, group)?;
                v.iter_mut().for_each(|x| *x *= s);
                self.tiles[tile.0 as usize][group] = Some(v);
            }
            TileOp::Mma { acc, a, b } => {
                // The accumulators are rewritten; A and B are other tiles (their roles
                // differ), read where they are.
                let mut c = self.tile_values(acc, op, span, lane, group)?;
                let (av, bv) = match (&self.tiles[a.0 as usize][group], &self.tiles[b.0 as usize][group]) {
                    (Some(av), Some(bv)) => (av, bv),
                    (None, _) => return Err(self.undefined(a, op, span, lane, group)),
                    (_, None) => return Err(self.undefined(b, op, span, lane, group)),
                };
                accumulate(&mut c, av, bv);
                self.ops += (VALUES * TILE_DIM as usize) as u64;
                self.tiles[acc.0 as usize][group] = Some(c);
            }
            TileOp::Load { tile, src, col_major, .. } => {
                let role = self.kernel.tiles[tile.0 as usize].role;
                let at = self.tile_addresses(op, role, ops, col_major, span, lane)?;
                let owner = GROUP | group as u16;
                let mut v = vec![0f32; VALUES];
                for (e, &m) in at.iter().enumerate() {
                    let word = if role == TileRole::Acc { m } else { m / 2 };
                    let bits = self.tile_read(src, word, owner, span, lane)?;
                    v[e] = if role == TileRole::Acc { f32::from_bits(bits) } else { f16_to_f32((bits >> (16 * (m % 2))) as u16) };
                }
                self.ops += VALUES as u64;
                self.tiles[tile.0 as usize][group] = Some(v);
            }
            TileOp::Store { tile, dst, col_major, .. } => {
                let v = self.tile_values(tile, op, span, lane, group)?;
                let at = self.tile_addresses(op, TileRole::Acc, ops, col_major, span, lane)?;
                let owner = GROUP | group as u16;
                let written = at.iter().enumerate().try_for_each(|(e, &m)| self.tile_write(dst, m, v[e].to_bits(), owner, span, lane));
                // The tile stays the group's after a store.
                self.tiles[tile.0 as usize][group] = Some(v);
                written?;
                self.ops += VALUES as u64;
            }
            TileOp::Get { vals, tile, scratch, .. } => {
                let v = self.tile_values(tile, op, span, lane, group)?;
                // The scratch is written as the backends without register access write
                // it, so that a scratch another group or invocation uses is a race here.
                let stored = self.scratch_write(scratch, op, TileRole::Acc, &v, ops, span, lane, group);
                let var = &mut frame.vars[vals.0 as usize];
                for (at, r, c) in group_slots(group) {
                    var[at] = v[(r * TILE_DIM + c) as usize].to_bits();
                }
                self.tiles[tile.0 as usize][group] = Some(v);
                stored?;
                self.ops += VALUES as u64;
            }
            TileOp::Set { tile, vals, scratch, .. } => {
                let role = self.kernel.tiles[tile.0 as usize].role;
                let mut v = slots_as_tile(&frame.vars[vals.0 as usize], group);
                if role != TileRole::Acc {
                    // An operand holds f16 values: rounded to nearest even.
                    v.iter_mut().for_each(|x| *x = f16_to_f32(f32_to_f16(*x)));
                }
                self.scratch_write(scratch, op, role, &v, ops, span, lane, group)?;
                self.tiles[tile.0 as usize][group] = Some(v);
                self.ops += VALUES as u64;
            }
            TileOp::Coords { rows, cols } => {
                for (at, r, c) in group_slots(group) {
                    frame.vars[rows.0 as usize][at] = r;
                    frame.vars[cols.0 as usize][at] = c;
                }
            }
            // Run by `exec_tile` for the whole workgroup.
            TileOp::PanelMma { .. } | TileOp::PanelWait => {}
            TileOp::Reduce { vals, op: how } => {
                let var = &mut frame.vars[vals.0 as usize];
                let v = slots_as_tile(var, group);
                let n = TILE_DIM as usize;
                let all = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let rows: Vec<f32> = v
                    .chunks(n)
                    .map(|row| match how {
                        // In f64, in order of the column, rounded once.
                        TileReduce::RowSum => row.iter().map(|&x| f64::from(x)).sum::<f64>() as f32,
                        TileReduce::RowMax => row.iter().copied().fold(f32::NEG_INFINITY, f32::max),
                        TileReduce::AllMax => all,
                    })
                    .collect();
                for (at, r, _) in group_slots(group) {
                    var[at] = rows[r as usize].to_bits();
                }
                self.ops += VALUES as u64;
            }
        }
        Ok(())
    }

    /// `tile_mma_panel` for every group: the whole workgroup with one set of operands
    /// (`ops`: base, rows, row0, col0), each group's accumulators plus its A times the
    /// same 16 × 64 B (16 × 128 with eight accumulators), read from the panel as each
    /// group and kept to be compared at the wait. The sums follow `tile_mma`'s rule.
    fn panel_mma(&mut self, t: &TileOp, span: SpanId, lanes: &[u16], vals: &[Vec<u32>]) -> R<()> {
        let TileOp::PanelMma { accs, a, panel, by_rows, .. } = t else { return Ok(()) };
        let (a, panel, by_rows) = (*a, *panel, *by_rows);
        // The product's columns: 16 per accumulator.
        let width = 16 * accs.len() as u64;
        let op = t.name();
        let first = lanes.first().copied().unwrap_or(0);
        if lanes.len() != self.n {
            return Err(self.fault(span, first, Fault::NonUniform { what: op, active: lanes.len(), expected: self.n }));
        }
        const NAMES: [&str; 4] = ["base", "rows", "row0", "col0"];
        let mut ops = [0u32; 4];
        for (o, v) in vals.iter().enumerate() {
            ops[o] = v[first as usize];
            if let Some(&l) = lanes.iter().find(|&&l| v[l as usize] != ops[o]) {
                let fault = Fault::TileOperandsDiffer { op, group: l as usize / 32, operand: NAMES[o], first: ops[o], other: v[l as usize] };
                return Err(self.fault(span, l, fault));
            }
        }
        let [base, rows, row0, col0] = ops;
        let (span_rows, span_cols) = if by_rows { (16, width) } else { (width, 16) };
        let rules: [(&'static str, u32, bool, &'static str); 4] = [
            ("base", base, base % 256 == 0, "a panel starts at a multiple of 256 words (1024 bytes)"),
            ("rows", rows, rows % 8 == 0 && rows > 0, "a panel's rows are a positive multiple of 8"),
            (
                "row0",
                row0,
                row0 % 8 == 0 && u64::from(row0) + span_rows <= u64::from(rows),
                "the rows read start at a multiple of 8, within the panel",
            ),
            (
                "col0",
                col0,
                col0 % span_cols as u32 == 0 && u64::from(col0) + span_cols <= 128,
                match (by_rows, width) {
                    (true, 64) => "the 64 columns read start at 0 or 64",
                    (true, _) => "the 128 columns read start at 0",
                    _ => "the 16 columns read start at a multiple of 16 below 128",
                },
            ),
        ];
        if let Some(&(operand, value, _, rule)) = rules.iter().find(|r| !r.2) {
            return Err(self.fault(span, first, Fault::PanelOperand { operand, value, rule }));
        }
        let n = TILE_DIM as usize;
        for group in 0..self.n / 32 {
            let lane = (group * 32) as u16;
            let owner = GROUP | group as u16;
            let av = match &self.tiles[a.0 as usize][group] {
                Some(v) => v.clone(),
                None => return Err(self.undefined(a, op, span, lane, group)),
            };
            for (j, acc) in accs.iter().enumerate() {
                // B_j (k, n): panel (row0 + 16j + n, col0 + k), or by rows (row0 + k, col0 + 16j + n).
                let mut bv = vec![0f32; VALUES];
                for k in 0..n as u32 {
                    for c in 0..n as u32 {
                        let (r, col) = if by_rows { (row0 + k, col0 + 16 * j as u32 + c) } else { (row0 + 16 * j as u32 + c, col0 + k) };
                        let word = u64::from(base) + u64::from(panel_word(r, col / 8, rows)) + u64::from(col % 8 / 2);
                        let bits = self.tile_read(panel, word, owner, span, lane)?;
                        // Every group reads the same words: kept once for the wait.
                        if group == 0 {
                            self.panels.reads.push((panel, word, bits));
                        }
                        bv[k as usize * n + c as usize] = f16_to_f32((bits >> (16 * (col % 2))) as u16);
                    }
                }
                let mut c = self.tile_values(*acc, op, span, lane, group)?;
                accumulate(&mut c, &av, &bv);
                self.ops += (VALUES * n) as u64;
                self.tiles[acc.0 as usize][group] = Some(c);
            }
        }
        for id in accs.iter().chain([&a]) {
            if !self.panels.tiles.contains(id) {
                self.panels.tiles.push(*id);
            }
        }
        Ok(())
    }

    /// `tile_mma_wait`: the pending products complete; a panel word they read that has
    /// changed since is a fault (the hardware may have read either value).
    fn panel_wait(&mut self, span: SpanId, lane: u16) -> R<()> {
        let reads = std::mem::take(&mut self.panels.reads);
        self.panels.tiles.clear();
        for (place, word, bits) in reads {
            if let Place::Shared(s) = place {
                let now = self.shared[s.0 as usize].peek(word as usize);
                if now != Some(bits) {
                    let fault = Fault::PanelWrittenBeforeWait { panel: self.kernel.shared[s.0 as usize].name.clone(), index: word as usize };
                    return Err(self.fault(span, lane, fault));
                }
            }
        }
        Ok(())
    }

    /// The scratch of `op` (`tile_get` or `tile_set`), written with the tile's values as
    /// the group (f32 values for an accumulator; f16 pairs for an operand).
    #[allow(clippy::too_many_arguments)]
    fn scratch_write(
        &mut self,
        scratch: Place,
        op: &'static str,
        role: TileRole,
        v: &[f32],
        ops: [u32; 2],
        span: SpanId,
        lane: u16,
        group: usize,
    ) -> R<()> {
        let at = self.tile_addresses(op, role, ops, false, span, lane)?;
        let owner = GROUP | group as u16;
        for (e, &m) in at.iter().enumerate() {
            if role == TileRole::Acc {
                self.tile_write(scratch, m, v[e].to_bits(), owner, span, lane)?;
            } else if m % 2 == 0 {
                // Columns 2j and 2j + 1 share a word (index and stride are even).
                let bits = u32::from(f32_to_f16(v[e])) | (u32::from(f32_to_f16(v[e + 1])) << 16);
                self.tile_write(scratch, m / 2, bits, owner, span, lane)?;
            }
        }
        Ok(())
    }

    /// A group's tile, taken out to be rewritten (the caller puts it back), or the fault
    /// of reading it before it was written.
    fn tile_values(&mut self, tile: TileId, op: &'static str, span: SpanId, lane: u16, group: usize) -> R<Vec<f32>> {
        match self.tiles[tile.0 as usize][group].take() {
            Some(v) => Ok(v),
            None => Err(self.undefined(tile, op, span, lane, group)),
        }
    }

    /// The fault of reading `tile` before its group wrote it.
    fn undefined(&self, tile: TileId, op: &'static str, span: SpanId, lane: u16, group: usize) -> crate::cpu::error::InterpError {
        let fault = Fault::TileUndefined { op, tile: self.kernel.tiles[tile.0 as usize].name.clone(), group };
        self.fault(span, lane, fault)
    }

    /// The memory index (f16 values for operands, f32 values for accumulators) of each
    /// element (i, j), in row-major order of the tile, after the alignment checks.
    fn tile_addresses(&self, op: &'static str, role: TileRole, ops: [u32; 2], col_major: bool, span: SpanId, lane: u16) -> R<Vec<u64>> {
        let [index, stride] = ops;
        let multiple = role.alignment();
        for (operand, value) in [("index", index), ("stride", stride)] {
            if value % multiple != 0 {
                return Err(self.fault(span, lane, Fault::TileMisaligned { op, operand, value, multiple }));
            }
        }
        let (index, stride) = (u64::from(index), u64::from(stride));
        let n = u64::from(TILE_DIM);
        Ok((0..n * n).map(|e| if col_major { index + (e % n) * stride + e / n } else { index + (e / n) * stride + e % n }).collect())
    }

    /// Element `at` of a tile's source, read as the group `owner`.
    fn tile_read(&mut self, place: Place, at: u64, owner: u16, span: SpanId, lane: u16) -> R<u32> {
        match place {
            Place::Shared(s) => {
                let idx = self.tile_bounds(place, at, span, lane)?;
                let epoch = self.epoch;
                self.shared[s.0 as usize].read(idx, owner, epoch).map_err(|f| self.fault(span, lane, f))
            }
            Place::Buffer(p) => {
                let idx = self.tile_bounds(place, at, span, lane)?;
                match self.bindings[p.0 as usize] {
                    Binding::Buffer(b) => Ok(self.buffers[b].vals[idx]),
                    Binding::Scalar(_) => Ok(0),
                }
            }
            Place::Local(_) => Ok(0),
        }
    }

    /// Writes element `at` of a tile's destination as the group `owner`.
    fn tile_write(&mut self, place: Place, at: u64, bits: u32, owner: u16, span: SpanId, lane: u16) -> R<()> {
        let idx = self.tile_bounds(place, at, span, lane)?;
        match place {
            Place::Shared(s) => {
                let epoch = self.epoch;
                self.shared[s.0 as usize].write(idx, owner, epoch, bits).map_err(|f| self.fault(span, lane, f))
            }
            Place::Buffer(p) => {
                if let Binding::Buffer(b) = self.bindings[p.0 as usize] {
                    self.buffers[b].vals[idx] = bits;
                }
                Ok(())
            }
            Place::Local(_) => Ok(()),
        }
    }

    /// Index `at` of a shared array or bound buffer, bounds-checked.
    fn tile_bounds(&self, place: Place, at: u64, span: SpanId, lane: u16) -> R<usize> {
        let (target, len) = match place {
            Place::Shared(s) => (self.kernel.shared[s.0 as usize].name.clone(), self.shared[s.0 as usize].len()),
            Place::Buffer(p) => match self.bindings[p.0 as usize] {
                Binding::Buffer(b) => (self.buffers[b].name.clone(), self.buffers[b].vals.len()),
                Binding::Scalar(_) => (self.kernel.params[p.0 as usize].name.clone(), 0),
            },
            Place::Local(v) => (format!("local #{}", v.0), 0),
        };
        if at >= len as u64 {
            return Err(self.fault(span, lane, Fault::OutOfBounds { target, index: at as i64, len }));
        }
        Ok(at as usize)
    }
}

/// `tile_mma`'s rule: each accumulator of `c` plus its 16 products of `a` and `b`
/// (row-major 16 × 16 tiles), summed in f64 in order of the inner index (every product
/// of two f16 values is exact in f64) and rounded once to f32.
fn accumulate(c: &mut [f32], a: &[f32], b: &[f32]) {
    let n = TILE_DIM as usize;
    for i in 0..n {
        for j in 0..n {
            let mut s = f64::from(c[i * n + j]);
            for k in 0..n {
                s += f64::from(a[i * n + k]) * f64::from(b[k * n + j]);
            }
            c[i * n + j] = s as f32;
        }
    }
}

/// The `tile_mma_panel`s of a workgroup not yet waited for.
#[derive(Default)]
pub(super) struct Pending {
    /// The tiles they name.
    tiles: Vec<TileId>,
    /// The panel words they read, with the bits read.
    reads: Vec<(Place, u64, u32)>,
}

/// Each slot of the invocations of `group`: its index in a local slot array (lane-major,
/// as the interpreter holds locals) and the (row, column) it holds.
fn group_slots(group: usize) -> impl Iterator<Item = (usize, u32, u32)> {
    (0..32u32).flat_map(move |i| {
        (0..TILE_SLOTS).map(move |e| {
            let (r, c) = LAYOUT.coords(i, e);
            ((group * 32 + i as usize) * SLOTS + e as usize, r, c)
        })
    })
}

/// The tile (row-major) that `group`'s slots in the local array `var` form.
fn slots_as_tile(var: &[u32], group: usize) -> Vec<f32> {
    let mut v = vec![0f32; VALUES];
    for (at, r, c) in group_slots(group) {
        v[(r * TILE_DIM + c) as usize] = f32::from_bits(var[at]);
    }
    v
}
