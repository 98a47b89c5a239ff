//! Validation cases: the shapes, scalar values and input distributions a kernel is
//! validated with. Kernel families provide them next to their kernels; the validator
//! fills the buffers from a seed, so a case plus a seed names exact inputs.

use crate::types::Literal;

/// How a buffer is filled.
#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    /// Uniform random values in `[lo, hi)` (floats), rounded to the storage type.
    Uniform {
        /// Lower bound.
        lo: f64,
        /// Upper bound.
        hi: f64,
    },
    /// Uniform random integers in `[lo, hi]`.
    Ints {
        /// Lower bound.
        lo: i64,
        /// Upper bound.
        hi: i64,
    },
    /// Random 32-bit words `(r & and) | or`: memory images (a cache of packed halves or
    /// quantized blocks) whose exponent bits are pinned to a safe range.
    Bits {
        /// Bits kept from the random word.
        and: u32,
        /// Bits then set.
        or: u32,
    },
    /// Distinct random integers from `[0, n)` (`len ≤ n`): a shuffled slot table, where
    /// a repeated slot would make two workgroups write the same cache row.
    Distinct {
        /// Size of the range.
        n: u32,
    },
    /// Entry i holds `i · step`: the offsets of rows of `step` elements each (a varlen
    /// batch's starts with room for `step` tokens per sequence).
    Steps {
        /// Distance between consecutive entries.
        step: u32,
    },
    /// Zeros (outputs).
    Zeros,
}

/// One buffer of a case.
#[derive(Clone, Debug, PartialEq)]
pub struct BufferCase {
    /// Parameter name.
    pub name: String,
    /// Number of elements.
    pub len: usize,
    /// Contents.
    pub fill: Fill,
}

/// One validation case of a kernel.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Short description (`4 rows × 1000`).
    pub label: String,
    /// Workgroups to dispatch.
    pub groups: [u32; 3],
    /// Every buffer.
    pub buffers: Vec<BufferCase>,
    /// Every push constant.
    pub scalars: Vec<(String, Literal)>,
}

impl Case {
    /// A case with a label and a grid.
    pub fn new(label: impl Into<String>, groups: [u32; 3]) -> Self {
        Case { label: label.into(), groups, buffers: Vec::new(), scalars: Vec::new() }
    }

    /// Adds a buffer.
    pub fn buffer(mut self, name: &str, len: usize, fill: Fill) -> Self {
        self.buffers.push(BufferCase { name: name.into(), len, fill });
        self
    }

    /// Adds a push-constant value.
    pub fn scalar(mut self, name: &str, v: Literal) -> Self {
        self.scalars.push((name.into(), v));
        self
    }
}
