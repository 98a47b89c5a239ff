//! Interpreter errors: every fault names the kernel, the DSL source location, the
//! workgroup and the invocation, so a user can find the offending line and lane.

use onekernel_dsl::types::Scalar;
use onekernel_dsl::validate::ValidationError;
use std::fmt;
use thiserror::Error;

/// Where a fault happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Site {
    /// Kernel name.
    pub kernel: String,
    /// `file:line:column` of the construct (of the call, inside a library function).
    pub location: String,
    /// The library function executing, if any.
    pub function: Option<String>,
    /// Workgroup id.
    pub group: [u32; 3],
    /// Local linear invocation index.
    pub invocation: u32,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kernel `{}` at {}", self.kernel, self.location)?;
        if let Some(func) = &self.function {
            write!(f, " (in library function `{func}`)")?;
        }
        write!(f, ", workgroup {:?}, invocation {}", self.group, self.invocation)
    }
}

/// What went wrong at a [`Site`].
#[derive(Clone, Debug, PartialEq, Error)]
pub enum Fault {
    /// An index outside a buffer or array.
    #[error("index {index} is out of bounds for `{target}` of length {len}")]
    OutOfBounds {
        /// Buffer or array name.
        target: String,
        /// The index (as a signed value, so negative i32 indices read naturally).
        index: i64,
        /// Its length in elements.
        len: usize,
    },
    /// Integer division or remainder by zero.
    #[error("integer division by zero")]
    DivisionByZero,
    /// `i32::MIN / -1` or `i32::MIN % -1`.
    #[error("integer division overflows (i32::MIN / -1)")]
    DivisionOverflow,
    /// A shift by 32 or more, or by a negative amount.
    #[error("shift amount {amount} is outside 0..32")]
    ShiftOutOfRange {
        /// The amount.
        amount: i64,
    },
    /// f32 → integer conversion of NaN or of a value outside the target's range.
    #[error("cannot convert {value:e} to {to}: out of range")]
    ConversionOutOfRange {
        /// The value.
        value: f32,
        /// Target type.
        to: Scalar,
    },
    /// A `for` loop with step 0.
    #[error("`for` loop step is zero")]
    ZeroStep,
    /// A `while` loop that ran longer than the interpreter's limit.
    #[error("`while` loop did not finish within {limit} iterations")]
    LoopLimit {
        /// The limit.
        limit: u64,
    },
    /// Two invocations touched one shared-memory cell with no barrier between.
    #[error("data race on shared `{array}`[{index}]: {kind} by {first} and invocation {second} with no barrier between")]
    DataRace {
        /// Shared array name.
        array: String,
        /// Cell index.
        index: usize,
        /// "written then read", "written twice" or "read then written".
        kind: &'static str,
        /// The earlier access: `invocation N` or `several invocations`.
        first: String,
        /// Later invocation.
        second: u32,
    },
    /// A read of shared memory no invocation has written in this workgroup.
    #[error("read of uninitialized shared `{array}`[{index}]")]
    UninitializedShared {
        /// Shared array name.
        array: String,
        /// Cell index.
        index: usize,
    },
    /// An access to shared memory that an `async_copy` is still filling.
    #[error(
        "shared `{array}`[{index}] is accessed while an `async_copy` into it is in flight (no `async_wait` of the copying invocation has retired it)"
    )]
    AsyncPending {
        /// Shared array name.
        array: String,
        /// Cell index.
        index: usize,
    },
    /// An `async_copy` whose indices are not multiples of its element count (the
    /// backends copy 8 and 16 bytes only between aligned addresses).
    #[error("`async_copy` of {words} elements needs indices that are multiples of {words}; found destination {dst}, source {src}")]
    MisalignedCopy {
        /// Elements per copy.
        words: u32,
        /// Destination index.
        dst: u32,
        /// Source index.
        src: u32,
    },
    /// A `load_words` whose source index is not a multiple of its element count (the
    /// backends load 8 and 16 bytes only from aligned addresses).
    #[error("`load_words` of {words} elements needs a source index that is a multiple of {words}; found {src}")]
    MisalignedLoad {
        /// Elements per load.
        words: u32,
        /// Source index.
        src: u32,
    },
    /// A `store_words` whose destination index is not a multiple of its element count
    /// (the backends store 8 and 16 bytes only to aligned addresses).
    #[error("`store_words` of {words} elements needs a destination index that is a multiple of {words}; found {dst}")]
    MisalignedStore {
        /// Elements per store.
        words: u32,
        /// Destination index.
        dst: u32,
    },
    /// A tile operation reached by only some invocations of a group of 32.
    #[error("`{op}` reached by {active} of the 32 invocations of group {group} (a group computes a tile together)")]
    TilePartialGroup {
        /// The operation.
        op: &'static str,
        /// The group (local linear index / 32).
        group: usize,
        /// Its invocations that reached the statement.
        active: usize,
    },
    /// A tile operation whose operands differ between invocations of one group.
    #[error("`{op}`'s {operand} differs within group {group}: {first:#x} and {other:#x} (a group passes one set of operands)")]
    TileOperandsDiffer {
        /// The operation.
        op: &'static str,
        /// The group (local linear index / 32).
        group: usize,
        /// Which operand.
        operand: &'static str,
        /// The group's first invocation's value (bits).
        first: u32,
        /// A different value in the group (bits).
        other: u32,
    },
    /// A tile index or stride that is not a multiple of the rows' 16 bytes (8 f16 or 4
    /// f32 values), as tensor-core loads and stores need.
    #[error("`{op}`'s {operand} is {value}: it must be a multiple of {multiple} (rows of 16 bytes)")]
    TileMisaligned {
        /// The operation.
        op: &'static str,
        /// Which operand.
        operand: &'static str,
        /// Its value.
        value: u32,
        /// What it must be a multiple of.
        multiple: u32,
    },
    /// A tile read before its group wrote it (`tile_fill` or `tile_load`).
    #[error("`{op}` reads tile `{tile}` before group {group} wrote it (`tile_fill` or `tile_load` first)")]
    TileUndefined {
        /// The operation.
        op: &'static str,
        /// The tile.
        tile: String,
        /// The group.
        group: usize,
    },
    /// A tile named by another operation while a `tile_mma_panel` that uses it may still
    /// be running (before `tile_mma_wait`).
    #[error("`{op}` uses tile `{tile}` while a `tile_mma_panel` on it may still run (call `tile_mma_wait()` first)")]
    TilePending {
        /// The operation.
        op: &'static str,
        /// The tile.
        tile: String,
    },
    /// A `tile_mma_panel` operand outside what the panel layouts allow.
    #[error("`tile_mma_panel`'s {operand} is {value}: {rule}")]
    PanelOperand {
        /// Which operand.
        operand: &'static str,
        /// Its value.
        value: u32,
        /// What it must be.
        rule: &'static str,
    },
    /// A panel written between the `tile_mma_panel` that reads it and `tile_mma_wait`.
    #[error("panel `{panel}` word {index} was written while a `tile_mma_panel` reading it may still run (call `tile_mma_wait()` first)")]
    PanelWrittenBeforeWait {
        /// The shared array.
        panel: String,
        /// The word.
        index: usize,
    },
    /// `last_arrival`'s counter index or count differs between the invocations of one
    /// workgroup.
    #[error("the {what} of `last_arrival` differs between invocations ({first} and {other}): the workgroup arrives once, at one counter")]
    ArrivalOperandsDiffer {
        /// "counter index" or "count".
        what: &'static str,
        /// The first invocation's value.
        first: u32,
        /// A value another invocation holds.
        other: u32,
    },
    /// `last_arrival` with a count of 0 (no workgroup could be the last of none).
    #[error("`last_arrival` at counter {index} of `{counters}` with a count of 0")]
    ArrivalCountZero {
        /// The counters' buffer.
        counters: String,
        /// The counter.
        index: u32,
    },
    /// Workgroups of one launch arriving at one counter with different counts.
    #[error(
        "`last_arrival` at counter {index} of `{counters}` with count {count}, but an earlier workgroup of the launch arrived there with {earlier}"
    )]
    ArrivalCountDiffers {
        /// The counters' buffer.
        counters: String,
        /// The counter.
        index: u32,
        /// This workgroup's count.
        count: u32,
        /// The count the first arrival gave.
        earlier: u32,
    },
    /// The first arrival of a launch at a counter found it not 0: a launch before left it
    /// counting (fewer workgroups arrived than its count), or the buffer was not zeroed.
    #[error("counter {index} of `{counters}` holds {value} at the launch's first arrival there (a counter starts at 0: zero the buffer once, and let every launch's arrivals complete)")]
    ArrivalCounterNotZero {
        /// The counters' buffer.
        counters: String,
        /// The counter.
        index: u32,
        /// What it held.
        value: u32,
    },
    /// More workgroups arrived at a counter than its count: a workgroup after the last.
    #[error("a workgroup arrived at counter {index} of `{counters}` after its last ({count} had arrived)")]
    ArrivalOverflow {
        /// The counters' buffer.
        counters: String,
        /// The counter.
        index: u32,
        /// The count.
        count: u32,
    },
    /// At the end of the launch fewer workgroups had arrived at a counter than its count:
    /// no workgroup was the last, and the counter is left for the next launch to trip on.
    #[error("the launch ended with {arrived} of {count} workgroups arrived at counter {index} of `{counters}`: none was the last")]
    ArrivalIncomplete {
        /// The counters' buffer.
        counters: String,
        /// The counter.
        index: u32,
        /// Workgroups that arrived.
        arrived: u32,
        /// The count they gave.
        count: u32,
    },
    /// A barrier or reduction reached by only some invocations.
    #[error("`{what}` reached by {active} of {expected} invocations (it must be reached by all)")]
    NonUniform {
        /// `barrier()` or the reduction's name.
        what: &'static str,
        /// Invocations that reached it.
        active: usize,
        /// Invocations that should have.
        expected: usize,
    },
}

/// Why a launch on the interpreter failed.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum InterpError {
    /// The kernel's IR does not validate.
    #[error("kernel `{kernel}` is invalid: {}", .errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; "))]
    Invalid {
        /// Kernel name.
        kernel: String,
        /// Validation errors.
        errors: Vec<ValidationError>,
    },
    /// A missing, extra or mistyped argument, or a bad dispatch size.
    #[error("kernel `{kernel}`: {message}")]
    Arguments {
        /// Kernel name.
        kernel: String,
        /// What is wrong.
        message: String,
    },
    /// A fault while executing.
    #[error("{site}: {fault}")]
    Fault {
        /// Where.
        site: Box<Site>,
        /// What.
        fault: Fault,
    },
}
