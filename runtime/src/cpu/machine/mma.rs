//! `mma_f16` in the interpreter: the reference meaning of a tensor-core tile.
//!
//! Each group of 32 invocations that reaches the statement computes its tile once, with
//! the operands all its invocations passed (they must agree, and all 32 must be there:
//! the hardware instruction needs the whole warp). An accumulator is updated by one
//! `fma` per product in order of the inner index, starting from its old value; f16
//! products are exact in f32, so each step rounds only the sum. Tensor cores round
//! their sums differently, which is why a kernel using the statement is `fast`.

use super::{Frame, Machine, R};
use crate::cpu::error::Fault;
use crate::cpu::shared::GROUP;
use onekernel_dsl::half::f16_to_f32;
use onekernel_dsl::ir::{Mma, SharedId, SpanId};

/// The operands in `Mma::exprs` order, as the faults name them.
const OPERANDS: [&str; 8] =
    ["accumulator index", "accumulator row stride", "accumulator column stride", "column count", "A index", "A stride", "B index", "B stride"];

/// Rows of the tile (and of A).
const ROWS: u64 = 16;
/// Columns of B at most.
const COLS: u64 = 8;

impl<'k> Machine<'k> {
    /// Runs one `mma_f16` statement for every group of 32 among `lanes`.
    pub(super) fn exec_mma(&mut self, frame: &mut Frame<'k>, m: &Mma, span: SpanId, lanes: &[u16]) -> R<()> {
        let mut vals: Vec<Vec<u32>> = Vec::with_capacity(OPERANDS.len());
        let mut result = Ok(());
        for e in m.exprs() {
            let mut t = self.tmp();
            result = self.eval(frame, e, lanes, &mut t);
            vals.push(t);
            if result.is_err() {
                break;
            }
        }
        if result.is_ok() {
            result = self.mma_groups(m, span, lanes, &vals);
        }
        for t in vals {
            self.give(t);
        }
        result
    }

    /// Splits the active lanes (in ascending order) into groups of 32 and checks that
    /// each group is whole and passes one set of operands.
    fn mma_groups(&mut self, m: &Mma, span: SpanId, lanes: &[u16], vals: &[Vec<u32>]) -> R<()> {
        let mut i = 0;
        while i < lanes.len() {
            let group = lanes[i] as usize / 32;
            let members = lanes[i..].iter().take_while(|&&l| l as usize / 32 == group).count();
            let first = lanes[i];
            if members != 32 {
                return Err(self.fault(span, first, Fault::MmaPartialGroup { group, active: members }));
            }
            let mut ops = [0u32; 8];
            for (o, v) in vals.iter().enumerate() {
                ops[o] = v[first as usize];
                if let Some(&l) = lanes[i..i + members].iter().find(|&&l| v[l as usize] != ops[o]) {
                    let fault = Fault::MmaOperandsDiffer { group, operand: OPERANDS[o], first: ops[o], other: v[l as usize] };
                    return Err(self.fault(span, l, fault));
                }
            }
            self.mma_tile(m, span, first, group, ops)?;
            i += members;
        }
        Ok(())
    }

    /// One group's tile: reads A, B and the accumulators as the group's accesses (so
    /// that its own invocations may use them right after) and writes the sums.
    fn mma_tile(&mut self, m: &Mma, span: SpanId, lane: u16, group: usize, ops: [u32; 8]) -> R<()> {
        let [acc0, acc_rs, acc_cs, cols, a0, a_s, b0, b_s] = ops;
        if cols > COLS as u32 {
            return Err(self.fault(span, lane, Fault::MmaOperand { operand: OPERANDS[3], value: cols, rule: "at most 8 columns" }));
        }
        for (o, v) in [(4, a0), (5, a_s), (6, b0), (7, b_s)] {
            if v % 8 != 0 {
                let rule = "f16 indices and strides are multiples of 8 (rows of 16 bytes)";
                return Err(self.fault(span, lane, Fault::MmaOperand { operand: OPERANDS[o], value: v, rule }));
            }
        }
        let owner = GROUP | group as u16;
        let k = u64::from(m.k);
        let (a0, a_s, b0, b_s) = (u64::from(a0), u64::from(a_s), u64::from(b0), u64::from(b_s));
        let a_at = |i: u64, kk: u64| if m.a_col_major { a0 + kk * a_s + i } else { a0 + i * a_s + kk };
        let mut a = vec![0f32; (ROWS * k) as usize];
        for i in 0..ROWS {
            for kk in 0..k {
                a[(i * k + kk) as usize] = self.mma_half(m.a, a_at(i, kk), owner, span, lane)?;
            }
        }
        let cols = u64::from(cols);
        let mut b = vec![0f32; (cols * k) as usize];
        for j in 0..cols {
            for kk in 0..k {
                b[(j * k + kk) as usize] = self.mma_half(m.b, b0 + j * b_s + kk, owner, span, lane)?;
            }
        }
        let epoch = self.epoch;
        let acc = m.acc.0 as usize;
        for i in 0..ROWS {
            for j in 0..cols {
                let at = u64::from(acc0) + i * u64::from(acc_rs) + j * u64::from(acc_cs);
                let idx = self.mma_bounds(m.acc, at, span, lane)?;
                let old = self.shared[acc].read(idx, owner, epoch).map_err(|f| self.fault(span, lane, f))?;
                let mut s = f32::from_bits(old);
                for kk in 0..k {
                    s = a[(i * k + kk) as usize].mul_add(b[(j * k + kk) as usize], s);
                }
                self.shared[acc].write(idx, owner, epoch, s.to_bits()).map_err(|f| self.fault(span, lane, f))?;
            }
        }
        self.ops += ROWS * cols * k;
        Ok(())
    }

    /// f16 value `h` of a shared array of u32 words (two values each, the low half
    /// first), read as the group `owner`.
    fn mma_half(&mut self, arr: SharedId, h: u64, owner: u16, span: SpanId, lane: u16) -> R<f32> {
        let idx = self.mma_bounds(arr, h / 2, span, lane)?;
        let epoch = self.epoch;
        let bits = self.shared[arr.0 as usize].read(idx, owner, epoch).map_err(|f| self.fault(span, lane, f))?;
        Ok(f16_to_f32((bits >> (16 * (h % 2))) as u16))
    }

    /// Index `at` of shared array `arr`, bounds-checked.
    fn mma_bounds(&self, arr: SharedId, at: u64, span: SpanId, lane: u16) -> R<usize> {
        let len = self.shared[arr.0 as usize].len();
        if at >= len as u64 {
            let target = self.kernel.shared[arr.0 as usize].name.clone();
            return Err(self.fault(span, lane, Fault::OutOfBounds { target, index: at as i64, len }));
        }
        Ok(at as usize)
    }
}
