//! The kernel IR: what the `#[kernel]` macro produces, the validator checks, the code
//! generator prints and the reference interpreter executes.
//!
//! The IR is fully typed (every [`Expr`] carries its [`Scalar`] type) and structured
//! (no gotos): `if`, counted `for`, `while`, `break`, `continue`, `return`. Names are
//! resolved to indices: [`VarId`] into [`Kernel::locals`], [`ParamId`] into
//! [`Kernel::params`], [`SharedId`] into [`Kernel::shared`]. Library functions are
//! referred to by name and carried in [`Kernel::functions`], so a kernel is
//! self-contained once built.

use crate::types::{Literal, Scalar, StorageType, VarType};
use serde::{Deserialize, Serialize};

/// Index of a local variable in [`Kernel::locals`] (or [`Function::locals`]).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// Index of a parameter in [`Kernel::params`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
pub struct ParamId(pub u32);

/// Index of a workgroup-shared array in [`Kernel::shared`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
pub struct SharedId(pub u32);

/// Index into [`Kernel::spans`]; [`SpanId::NONE`] for nodes without a DSL source
/// location (library functions, hand-built IR).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct SpanId(pub u32);

impl SpanId {
    /// No source location.
    pub const NONE: SpanId = SpanId(u32::MAX);
}

/// A line and column (both 1-based) in the DSL source file.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, Default)]
pub struct SrcLoc {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// Where a kernel came from.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize, Default)]
pub struct SourceInfo {
    /// Source file as the compiler named it (relative to the crate's manifest directory).
    pub file: String,
    /// Line of the `fn` item.
    pub line: u32,
    /// FNV-1a 64 hash of the kernel's token stream, hex: changes when the DSL source does.
    pub hash: String,
}

/// How a kernel's output is checked against the reference (DESIGN.md §4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Determinism {
    /// Bitwise identical to the reference interpreter on every backend.
    Exact,
    /// May use native fast paths; validated within a stated tolerance.
    Fast,
}

/// Read-only or read-write storage buffer.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Access {
    /// `&[T]`.
    ReadOnly,
    /// `&mut [T]`.
    ReadWrite,
}

/// A kernel parameter.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Param {
    /// The parameter's name in the DSL source.
    pub name: String,
    /// What kind of parameter it is.
    pub kind: ParamKind,
    /// Where it is declared.
    pub span: SpanId,
}

/// The three kinds of kernel parameter.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParamKind {
    /// A storage buffer (`&[T]` / `&mut [T]`).
    Buffer {
        /// Element type.
        elem: StorageType,
        /// Read-only or read-write.
        access: Access,
        /// Declared minimum length in elements (`#[len(…)]`): a u32 expression over
        /// push constants, spec constants, `num_groups()` and literals, checked by
        /// every backend before launch.
        #[serde(default)]
        len: Option<Expr>,
    },
    /// A push constant / kernel argument (`#[push]`); 4 bytes each, 128 bytes in all.
    Push {
        /// Its type.
        ty: Scalar,
    },
    /// A specialization constant (`#[spec(default = …)]`) or a variant axis
    /// (`variants(name = [...])`, which lists the values that are built and validated).
    Spec {
        /// Its type.
        ty: Scalar,
        /// The value used when none is given. Required.
        default: Option<Literal>,
        /// For a variant axis: every value the manifest enumerates.
        values: Option<Vec<Literal>>,
    },
}

impl ParamKind {
    /// The value type of a scalar parameter; `None` for buffers.
    pub fn scalar_type(&self) -> Option<Scalar> {
        match self {
            ParamKind::Buffer { .. } => None,
            ParamKind::Push { ty } | ParamKind::Spec { ty, .. } => Some(*ty),
        }
    }
}

/// A workgroup-shared array (`shared::<T, N>()`).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct SharedDecl {
    /// The binding's name in the source.
    pub name: String,
    /// Element type.
    pub elem: Scalar,
    /// Number of elements: the largest over the kernel's variants when `size` is given.
    pub len: u32,
    /// `shared::<T, { expr }>()`: the length per variant, an expression over variant
    /// axes (docs/DSL.md, "Shared memory"); `None` for a literal length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<Expr>,
    /// Where it is declared.
    pub span: SpanId,
}

impl SharedDecl {
    /// Elements of this array for a launch whose variant axes have the values `param`
    /// gives (`len` when the length is a literal, or cannot be evaluated).
    pub fn len_for(&self, param: &dyn Fn(ParamId) -> Option<crate::types::Literal>) -> u32 {
        match &self.size {
            None => self.len,
            Some(e) => crate::shapes::eval(e, param, [1; 3], [1; 3]).ok().and_then(|v| u32::try_from(v).ok()).unwrap_or(self.len),
        }
    }
}

/// A local variable (one per `let`, so shadowing gives a new id).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct LocalDecl {
    /// The name in the source.
    pub name: String,
    /// Its type.
    pub ty: VarType,
    /// Declared `mut`.
    pub mutable: bool,
}

/// A kernel: the unit the code generator emits and the runtime launches.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Kernel {
    /// Entry-point name (the Rust function's name).
    pub name: String,
    /// The doc comment of the DSL function.
    pub doc: String,
    /// Workgroup size (x, y, z).
    pub workgroup: [u32; 3],
    /// Determinism class.
    pub class: Determinism,
    /// `resident = N`: workgroups the CUDA compiler is asked to keep resident per
    /// multiprocessor (`__launch_bounds__`' minimum, which caps the registers per
    /// invocation at 64 Ki / (N · invocations)); `None` for the default of 512
    /// invocations. A hint for latency-bound kernels; other backends ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident: Option<u32>,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// Workgroup-shared arrays.
    pub shared: Vec<SharedDecl>,
    /// Register tiles (one of each per group of 32 invocations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tiles: Vec<TileDecl>,
    /// Local variables.
    pub locals: Vec<LocalDecl>,
    /// The body.
    pub body: Vec<Stmt>,
    /// Library functions the body calls, callees before callers.
    pub functions: Vec<Function>,
    /// Source locations, indexed by [`SpanId`].
    pub spans: Vec<SrcLoc>,
    /// Where the kernel was written.
    pub source: SourceInfo,
}

impl Kernel {
    /// Source location of a span, if it has one.
    pub fn loc(&self, span: SpanId) -> Option<SrcLoc> {
        self.spans.get(span.0 as usize).copied()
    }

    /// `file:line:column` for messages; just the file when the span has no location.
    pub fn describe_span(&self, span: SpanId) -> String {
        match self.loc(span) {
            Some(l) => format!("{}:{}:{}", self.source.file, l.line, l.column),
            None => self.source.file.clone(),
        }
    }

    /// Total number of invocations in one workgroup.
    pub fn workgroup_invocations(&self) -> u64 {
        // Saturating: three u32 sizes can overflow a u64 product, and a hostile size must
        // be a limit error, not a panic.
        self.workgroup.iter().fold(1u64, |acc, &d| acc.saturating_mul(d as u64))
    }

    /// Looks a parameter up by name.
    pub fn param(&self, name: &str) -> Option<(ParamId, &Param)> {
        self.params.iter().enumerate().find(|(_, p)| p.name == name).map(|(i, p)| (ParamId(i as u32), p))
    }

    /// Looks a library function up by name.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
    }
}

/// A straight-line library function: `let` statements and a result, no control flow
/// (branches are `select`s), so that it means the same thing under any mask.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Function {
    /// Name; backends prefix it (e.g. `ok_exp`).
    pub name: String,
    /// Documentation, including the measured error bound.
    pub doc: String,
    /// Parameter types; parameters are locals `0..params.len()`.
    pub params: Vec<Scalar>,
    /// Result type.
    pub ret: Scalar,
    /// Locals (parameters first).
    pub locals: Vec<LocalDecl>,
    /// `let` statements only.
    pub body: Vec<Stmt>,
    /// The returned value.
    pub result: Expr,
}

/// A statement.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Stmt {
    /// What it does.
    pub kind: StmtKind,
    /// Where it is.
    pub span: SpanId,
}

/// Where an indexed store or load goes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// A storage buffer parameter.
    Buffer(ParamId),
    /// A local array.
    Local(VarId),
    /// A workgroup-shared array.
    Shared(SharedId),
}

/// Workgroup reduction operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReduceOp {
    /// Sum over the stride-halving tree.
    Sum,
    /// Maximum (`a > b ? a : b` at each node).
    Max,
    /// Minimum (`a < b ? a : b` at each node).
    Min,
}

impl ReduceOp {
    /// The DSL function name (`workgroup_sum` …).
    pub fn dsl_name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "workgroup_sum",
            ReduceOp::Max => "workgroup_max",
            ReduceOp::Min => "workgroup_min",
        }
    }

    /// The DSL name of the pair reduction with this operator.
    pub fn dsl_arg_name(self) -> &'static str {
        match self {
            ReduceOp::Max => "workgroup_argmax",
            ReduceOp::Min => "workgroup_argmin",
            ReduceOp::Sum => "workgroup_sum",
        }
    }
}

/// The DSL name of an [`StmtKind::AsyncCopy`]: `async_copy`, or `async_copy_bypass_l1`
/// where it bypasses L1 (for messages that name the statement as written).
pub fn async_copy_name(bypass_l1: bool) -> &'static str {
    if bypass_l1 {
        "async_copy_bypass_l1"
    } else {
        "async_copy"
    }
}

/// Statement kinds.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StmtKind {
    /// `let x = init;` (or `let x;` to be assigned later, or an array fill).
    Let {
        /// The new variable.
        var: VarId,
        /// Its initial value; for arrays see [`ArrayInit`].
        init: Option<Init>,
    },
    /// `x = value;`
    Assign {
        /// Target scalar variable.
        var: VarId,
        /// New value.
        value: Expr,
    },
    /// `place[index] = value;`
    Store {
        /// Buffer, local array or shared array.
        place: Place,
        /// Element index (u32 or i32).
        index: Expr,
        /// Value (converted to the storage type for buffers).
        value: Expr,
    },
    /// `if cond { then_body } else { else_body }`
    If {
        /// Condition (bool).
        cond: Expr,
        /// Taken when true.
        then_body: Vec<Stmt>,
        /// Taken when false.
        else_body: Vec<Stmt>,
    },
    /// `for var in (start..end).step_by(step) { body }`; bounds evaluated once.
    For {
        /// The loop counter (a fresh immutable local).
        var: VarId,
        /// First value.
        start: Expr,
        /// Exclusive bound.
        end: Expr,
        /// Positive step.
        step: Expr,
        /// Loop body.
        body: Vec<Stmt>,
        /// `#[peel_single_trip]` (unit step only): where the loop runs exactly once, the
        /// generated code runs the body once without a loop (docs/DSL.md, "Control
        /// flow"). The meaning is the same either way; the interpreter ignores it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        peel: bool,
    },
    /// `while cond { body }`
    While {
        /// Evaluated before every iteration.
        cond: Expr,
        /// Loop body.
        body: Vec<Stmt>,
    },
    /// `break;` out of the innermost loop.
    Break,
    /// `continue;` with the innermost loop.
    Continue,
    /// `return;` from the kernel.
    Return,
    /// `barrier();`: workgroup execution and shared-memory barrier.
    Barrier,
    /// `async_copy(dst, dst_index, src, src_index, words);`: starts copying `words`
    /// (1, 2 or 4) consecutive 32-bit elements of buffer `src` from `src_index` into
    /// shared array `dst` from `dst_index` (both indices multiples of `words`), without
    /// waiting for them (docs/DSL.md, "Asynchronous copies"). The destination is
    /// undefined until this invocation's [`StmtKind::AsyncWait`] retires the copy;
    /// other invocations see it after a `barrier()` that follows that wait.
    /// `async_copy_bypass_l1(…)` is the same copy (4 elements) with `bypass_l1` set.
    AsyncCopy {
        /// The shared array written.
        dst: SharedId,
        /// Its first element (u32).
        dst_index: Expr,
        /// The buffer read (32-bit elements of the same type as `dst`).
        src: ParamId,
        /// Its first element (u32).
        src_index: Expr,
        /// Elements per copy: 1, 2 or 4.
        words: u32,
        /// Whether the bytes bypass L1 on their way (a cache hint with no effect on the
        /// result: CUDA's `cp.async.cg`; backends without the distinction ignore it).
        bypass_l1: bool,
    },
    /// `load_words(dst, dst_index, src, src_index, words);`: reads `words` (2 or 4)
    /// consecutive 32-bit elements of a read-only buffer or a shared array `src` from
    /// `src_index` (a multiple of `words`) into local array `dst` from `dst_index`, as
    /// one aligned 8- or 16-byte load (docs/DSL.md, "Aligned vector loads and stores").
    LoadWords {
        /// The local array written.
        dst: VarId,
        /// Its first element (u32).
        dst_index: Expr,
        /// The read-only buffer ([`Place::Buffer`]) or shared array ([`Place::Shared`])
        /// read, of 32-bit elements of the same type as `dst`.
        src: Place,
        /// Its first element (u32, a multiple of `words`).
        src_index: Expr,
        /// Elements per load: 2 or 4.
        words: u32,
    },
    /// `store_words(dst, dst_index, src, src_index, words);`: writes `words` (2 or 4)
    /// consecutive elements of local array `src` from `src_index` into a writable
    /// buffer `dst` of 32-bit elements of the same type from `dst_index` (a multiple of
    /// `words`), as one aligned 8- or 16-byte store where the language has one
    /// (docs/DSL.md, "Aligned vector loads and stores").
    StoreWords {
        /// The buffer written (`&mut`).
        dst: ParamId,
        /// Its first element (u32, a multiple of `words`).
        dst_index: Expr,
        /// The local array read.
        src: VarId,
        /// Its first element (u32).
        src_index: Expr,
        /// Elements per store: 2 or 4.
        words: u32,
    },
    /// `async_commit();`: closes this invocation's group of copies started since the
    /// last commit; [`StmtKind::AsyncWait`] counts groups.
    AsyncCommit,
    /// `async_wait(pending);`: waits until at most `pending` of this invocation's
    /// committed groups (the newest) are still in flight; the older ones are complete.
    AsyncWait {
        /// Groups that may stay in flight (a literal, 0…7).
        pending: u32,
    },
    /// A register-tile operation (`tile_fill`, `tile_load`, `tile_store`, `tile_mma`,
    /// `tile_scale`, and the element access of `tile_get`, `tile_set`, `tile_coords` and
    /// the slot reductions), computed by an aligned group of 32 invocations together on the
    /// tiles it names (docs/DSL.md, "Register tiles"). Tensor cores round their sums
    /// differently from the interpreter, so a kernel that uses tiles is `fast`.
    Tile(Box<TileOp>),
    /// `var = workgroup_sum(value);` (or max / min): every invocation gets the result
    /// of the fixed stride-halving tree over the local linear index. With `arg`
    /// (`let (v, i) = workgroup_argmax(value, index);`, max or min only) the tree carries
    /// (value, index) pairs: a pair replaces the one it meets when its value is larger
    /// (smaller), or equal with a smaller index; a NaN never replaces and is never
    /// replaced — `var` gets the winning value, `arg.var` its index.
    Reduce {
        /// Receives the result (scalar local).
        var: VarId,
        /// The operator.
        op: ReduceOp,
        /// Each invocation's contribution.
        value: Expr,
        /// The index carried with each value, for argmax / argmin.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        arg: Option<Box<ReduceArg>>,
    },
    /// `let last = last_arrival(counters, index, count);`: the workgroup arrives, once, at
    /// counter `index` of the `&mut [u32]` buffer `counters`, which `count` workgroups of
    /// the launch reach; `var` is true in every invocation of the one that arrives last
    /// (docs/DSL.md, "Arrivals"). It is also a `barrier()`. Every buffer write the
    /// arriving workgroups made before it is visible to the last one's reads after it,
    /// and the last one sets the counter back to 0, so the buffer serves the next launch
    /// as it is.
    Arrive {
        /// Receives whether this workgroup arrived last (bool local, the same in every
        /// invocation).
        var: VarId,
        /// The counters (a `&mut [u32]` buffer used only by arrivals).
        counters: ParamId,
        /// The counter (u32, the same in every invocation).
        index: Expr,
        /// How many workgroups arrive at it in the launch (u32 ≥ 1, the same in every
        /// invocation and in every workgroup that arrives).
        count: Expr,
    },
}

/// The index half of a pair reduction ([`StmtKind::Reduce`]).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct ReduceArg {
    /// Receives the winning index (u32 local).
    pub var: VarId,
    /// Each invocation's index (u32).
    pub index: Expr,
}

/// Index of a register tile in [`Kernel::tiles`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize, PartialOrd, Ord)]
pub struct TileId(pub u32);

/// Rows, columns and inner dimension of every tile: 16 × 16 operands, 16 × 16 × 16
/// products (docs/DSL.md, "Register tiles").
pub const TILE_DIM: u32 = 16;

/// What a register tile holds.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TileRole {
    /// `tile_a()`: the left operand of a product, 16 rows × 16 (inner) f16 values.
    A,
    /// `tile_b()`: the right operand, 16 (inner) rows × 16 columns of f16 values.
    B,
    /// `tile_acc()`: 16 × 16 f32 accumulators.
    Acc,
}

impl TileRole {
    /// The DSL function that declares a tile of this role.
    pub fn constructor(self) -> &'static str {
        match self {
            TileRole::A => "tile_a",
            TileRole::B => "tile_b",
            TileRole::Acc => "tile_acc",
        }
    }

    /// The element type of the memory it is loaded from (and an accumulator stored to):
    /// u32 words of two f16 values for operands, f32 for accumulators.
    pub fn memory_elem(self) -> Scalar {
        match self {
            TileRole::A | TileRole::B => Scalar::U32,
            TileRole::Acc => Scalar::F32,
        }
    }

    /// Values that one index or stride must be a multiple of: rows start on 16-byte
    /// boundaries (8 f16 values, 4 f32 values), as `ldmatrix` and
    /// `OpCooperativeMatrixLoadKHR` require.
    pub fn alignment(self) -> u32 {
        match self {
            TileRole::A | TileRole::B => 8,
            TileRole::Acc => 4,
        }
    }
}

/// A register tile (`let t = tile_acc();`), owned by each aligned group of 32
/// invocations: every group has its own, held in the registers of its invocations.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct TileDecl {
    /// The name in the source.
    pub name: String,
    /// What it holds.
    pub role: TileRole,
    /// Where it is declared.
    pub span: SpanId,
}

/// The identifier a tile's name becomes in generated code: element `o[3]` of a tile
/// array is `o3`, so no two tiles of a kernel may have names that meet here (the macro
/// and validation hold them apart).
pub fn tile_identifier(name: &str) -> String {
    name.replace(['[', ']'], "")
}

/// One register-tile operation ([`StmtKind::Tile`]). Element (i, j) of memory holding a
/// tile is at `index + i · stride + j`, or `index + j · stride + i` with `col_major`;
/// for operands, `index` and `stride` count f16 values of a u32 array (two per word, the
/// low half first) and are multiples of 8; for accumulators they count f32 values and
/// are multiples of 4. Every operand expression must have one value across a group.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TileOp {
    /// `tile_fill(acc, value);`: every accumulator becomes `value` (f32).
    Fill {
        /// The accumulator tile.
        tile: TileId,
        /// The value (f32).
        value: Expr,
    },
    /// `tile_load(t, src, index, stride, col_major);`: a tile from a shared array or a
    /// read-only buffer.
    Load {
        /// The tile written.
        tile: TileId,
        /// A shared array or a buffer parameter.
        src: Place,
        /// Element of (0, 0) (u32).
        index: Expr,
        /// Elements from one row to the next (one column with `col_major`) (u32).
        stride: Expr,
        /// The memory holds the tile column by column.
        col_major: bool,
    },
    /// `tile_store(acc, dst, index, stride, col_major);`: an accumulator tile into a shared
    /// array or a writable buffer of f32.
    Store {
        /// The accumulator tile read.
        tile: TileId,
        /// A shared array or a buffer parameter.
        dst: Place,
        /// Element of (0, 0) (u32).
        index: Expr,
        /// Elements from one row to the next (one column with `col_major`) (u32).
        stride: Expr,
        /// The memory holds the tile column by column.
        col_major: bool,
    },
    /// `tile_mma(acc, a, b);`: `acc[i][j] += Σ_k a[i][k] · b[k][j]`.
    Mma {
        /// The accumulator tile updated.
        acc: TileId,
        /// The A operand.
        a: TileId,
        /// The B operand.
        b: TileId,
    },
    /// `tile_scale(acc, value);`: every accumulator times `value` (f32), rounded once.
    Scale {
        /// The accumulator tile.
        tile: TileId,
        /// The factor (f32).
        value: Expr,
    },
    /// `tile_get(vals, acc, scratch, index, stride);`: each invocation's
    /// [`TILE_SLOTS`] elements of an accumulator tile into a local f32 array, slot `e`
    /// holding the element at the coordinates [`TileOp::Coords`] gives it. Backends
    /// without register access go through the scratch (a shared f32 array, the tile at
    /// `index + i · stride + j`), whose contents are undefined afterwards.
    Get {
        /// The local f32 array of [`TILE_SLOTS`] values written.
        vals: VarId,
        /// The accumulator tile read.
        tile: TileId,
        /// The shared scratch.
        scratch: Place,
        /// Element of (0, 0) in the scratch (u32).
        index: Expr,
        /// Elements from one row to the next in the scratch (u32).
        stride: Expr,
    },
    /// `tile_set(tile, vals, scratch, index, stride);`: the reverse of
    /// [`TileOp::Get`], into an accumulator tile or an A operand (each value rounded to
    /// f16, to nearest even); the scratch is f32 for accumulators, u32 words of f16 pairs
    /// for operands (`index`, `stride` counting f16 values).
    Set {
        /// The tile written: `tile_acc()` or `tile_a()`.
        tile: TileId,
        /// The local f32 array of [`TILE_SLOTS`] values read.
        vals: VarId,
        /// The shared scratch.
        scratch: Place,
        /// Element of (0, 0) in the scratch (u32).
        index: Expr,
        /// Elements from one row to the next in the scratch (u32).
        stride: Expr,
    },
    /// `tile_coords(rows, cols);`: the row and column of each of this invocation's
    /// slots, into two local u32 arrays of [`TILE_SLOTS`].
    Coords {
        /// Receives each slot's row.
        rows: VarId,
        /// Receives each slot's column.
        cols: VarId,
    },
    /// `tile_row_max(vals);` (`tile_row_sum`, `tile_all_max`): each slot of a local f32
    /// array of [`TILE_SLOTS`] becomes the maximum (sum) over the slots of the group's
    /// 32 invocations in its row (`tile_all_max`: over all of them).
    Reduce {
        /// The local f32 array, read and written.
        vals: VarId,
        /// What is combined.
        op: TileReduce,
    },
    /// `tile_mma_panel(c0, c1, c2, c3, a, panel, base, rows, row0, col0, by_rows);`, or
    /// with eight accumulators `c0 … c7` (128 columns):
    /// `c_j[i][n] += Σ_k a[i][k] · B_j[k][n]` for each accumulator j, B_j read straight from a
    /// panel in shared memory (docs/DSL.md, "Panels"): its value at (row `row0 + 16j +
    /// n`, column `col0 + k`), or with `by_rows` at (row `row0 + k`, column `col0 + 16j +
    /// n`). Every invocation of the workgroup runs it together with the same operands;
    /// it may complete only at the next [`TileOp::PanelWait`], so until then its tiles
    /// are not touched and the panel is not written. On Hopper one `wgmma` of each
    /// warpgroup.
    PanelMma {
        /// The accumulator tiles updated: four (the product's 64 columns, 16 each) or
        /// eight (128 columns).
        accs: Vec<TileId>,
        /// The A operand (this group's 16 rows).
        a: TileId,
        /// The shared array (u32 words of f16 pairs) holding the panel.
        panel: Place,
        /// The panel's first word (a multiple of 256).
        base: Expr,
        /// The panel's rows (a multiple of 8).
        rows: Expr,
        /// The first row read (a multiple of 8).
        row0: Expr,
        /// The first column read (a multiple of 16; of 64 with `by_rows`, and 0 with
        /// eight accumulators).
        col0: Expr,
        /// The panel's rows are B's rows (V for `P · V`), else its columns (K for
        /// `Q · Kᵀ`).
        by_rows: bool,
    },
    /// `tile_mma_wait();`: every [`TileOp::PanelMma`] before it has completed.
    PanelWait,
}

/// Words a panel's row takes at most on any backend (docs/DSL.md, "Panels"): 128 f16
/// values and, where a backend pads rows, 8 more.
pub const PANEL_ROW_WORDS: u32 = 68;

/// `panel_word(row, chunk, rows)` in the interpreter's and CUDA's layout (docs/DSL.md,
/// "Panels"): the row's 64-value halves apart (half h of every row after half h − 1 of
/// all rows), each row's half 32 words, its 16-byte chunks permuted by `chunk XOR (row
/// mod 8)`: the 128-byte swizzle that Hopper's `wgmma` reads. Wrapping, as the DSL's u32
/// arithmetic.
pub fn panel_word(row: u32, chunk: u32, rows: u32) -> u32 {
    (chunk >> 3).wrapping_mul(rows).wrapping_mul(32).wrapping_add(row.wrapping_mul(32)).wrapping_add(((chunk & 7) ^ (row & 7)) << 2)
}

/// Values of a tile each invocation of its group holds in a slot ([`TileOp::Get`]):
/// 16 × 16 / 32.
pub const TILE_SLOTS: u32 = 8;

/// Which element of a tile each slot of an invocation holds ([`TileOp::Get`]). A kernel
/// asks with `tile_coords` and never assumes one: the interpreter and CUDA use
/// [`SlotLayout::Fragments`], the backends that go through the scratch
/// [`SlotLayout::RowPairs`], so a kernel that depends on one disagrees with the others.
/// What every layout keeps ([`SlotLayout::ROW_SLOTS`]): a slot's row depends only on
/// the invocation and on `(slot / 2) % 2`, so a kernel may hold per-row values in two
/// entries rather than eight; and slots 2k and 2k + 1 are neighbours in one row, the
/// first at an even column, so a kernel may write them with one `store_words` of 2
/// (both checked by this module's tests).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SlotLayout {
    /// `mma.sync` m16n8k16 fragments: lane 4g + t holds rows g and g + 8, columns 2t,
    /// 2t + 1, 2t + 8 and 2t + 9 (slot e: row g + 8·(e / 2 mod 2), column
    /// 8·(e / 4) + 2t + e mod 2).
    Fragments,
    /// Lane l holds row l / 2, columns 8·(l mod 2) … + 7.
    RowPairs,
}

impl SlotLayout {
    /// Every layout, for the checks of what they share.
    pub const ALL: [SlotLayout; 2] = [SlotLayout::Fragments, SlotLayout::RowPairs];

    /// Entries of a per-row array that cover an invocation's slots: slot e's row is
    /// entry `(e / 2) % 2`'s, and entry i's slots include slot 2i (docs/DSL.md, "Element
    /// access"). Under [`SlotLayout::RowPairs`] both entries are the same row.
    pub const ROW_SLOTS: u32 = 2;

    /// (row, column) of slot `slot` of the group's invocation `lane` (0 … 31).
    pub fn coords(self, lane: u32, slot: u32) -> (u32, u32) {
        match self {
            SlotLayout::Fragments => (lane / 4 + 8 * ((slot >> 1) & 1), 8 * (slot >> 2) + 2 * (lane % 4) + (slot & 1)),
            SlotLayout::RowPairs => (lane / 2, 8 * (lane % 2) + slot),
        }
    }
}

/// The combination of [`TileOp::Reduce`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TileReduce {
    /// `tile_row_max`: the maximum of the row's 16 values.
    RowMax,
    /// `tile_row_sum`: the sum of the row's 16 values.
    RowSum,
    /// `tile_all_max`: the maximum of the tile's 256 values.
    AllMax,
}

impl TileReduce {
    /// The DSL function's name.
    pub fn name(self) -> &'static str {
        match self {
            TileReduce::RowMax => "tile_row_max",
            TileReduce::RowSum => "tile_row_sum",
            TileReduce::AllMax => "tile_all_max",
        }
    }
}

impl TileOp {
    /// The expressions it evaluates, in argument order.
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            TileOp::Fill { value, .. } | TileOp::Scale { value, .. } => vec![value],
            TileOp::Load { index, stride, .. }
            | TileOp::Store { index, stride, .. }
            | TileOp::Get { index, stride, .. }
            | TileOp::Set { index, stride, .. } => {
                vec![index, stride]
            }
            TileOp::PanelMma { base, rows, row0, col0, .. } => vec![base, rows, row0, col0],
            TileOp::Mma { .. } | TileOp::Coords { .. } | TileOp::Reduce { .. } | TileOp::PanelWait => vec![],
        }
    }

    /// The tiles it names, the written one first.
    pub fn tiles(&self) -> Vec<TileId> {
        match self {
            TileOp::Fill { tile, .. }
            | TileOp::Scale { tile, .. }
            | TileOp::Load { tile, .. }
            | TileOp::Store { tile, .. }
            | TileOp::Get { tile, .. }
            | TileOp::Set { tile, .. } => vec![*tile],
            TileOp::Mma { acc, a, b } => vec![*acc, *a, *b],
            TileOp::PanelMma { accs, a, .. } => accs.iter().chain([a]).copied().collect(),
            TileOp::Coords { .. } | TileOp::Reduce { .. } | TileOp::PanelWait => vec![],
        }
    }

    /// The local arrays it writes.
    pub fn locals_written(&self) -> Vec<VarId> {
        match self {
            TileOp::Get { vals, .. } | TileOp::Reduce { vals, .. } => vec![*vals],
            TileOp::Coords { rows, cols } => vec![*rows, *cols],
            _ => vec![],
        }
    }

    /// The DSL function's name.
    pub fn name(&self) -> &'static str {
        match self {
            TileOp::Fill { .. } => "tile_fill",
            TileOp::Load { .. } => "tile_load",
            TileOp::Store { .. } => "tile_store",
            TileOp::Mma { .. } => "tile_mma",
            TileOp::Scale { .. } => "tile_scale",
            TileOp::Get { .. } => "tile_get",
            TileOp::Set { .. } => "tile_set",
            TileOp::Coords { .. } => "tile_coords",
            TileOp::Reduce { op, .. } => op.name(),
            TileOp::PanelMma { .. } => "tile_mma_panel",
            TileOp::PanelWait => "tile_mma_wait",
        }
    }
}

/// The initializer of a `let`.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Init {
    /// A scalar value.
    Value(Expr),
    /// An array initializer.
    Array(ArrayInit),
}

/// Array initializers.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArrayInit {
    /// `[value; len]`.
    Fill(Expr),
    /// `[a, b, c]`.
    Elements(Vec<Expr>),
}

/// A typed expression.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Expr {
    /// The operation.
    pub kind: ExprKind,
    /// Its value type.
    pub ty: Scalar,
    /// Where it is.
    pub span: SpanId,
}

impl Expr {
    /// Whether this is the literal 1 (`u32` or `i32`): a `for` loop's unit step.
    pub fn is_one(&self) -> bool {
        matches!(self.kind, ExprKind::Lit(crate::types::Literal::U32(1) | crate::types::Literal::I32(1)))
    }
}

/// Per-invocation or per-dispatch built-in values (one component each).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Builtin {
    /// `local_id()`: the invocation's index in its workgroup.
    LocalId,
    /// `group_id()`: the workgroup's index.
    GroupId,
    /// `global_id()`: `group_id * workgroup + local_id`.
    GlobalId,
    /// `num_groups()`: workgroups in the dispatch.
    NumGroups,
    /// `WORKGROUP_X/Y/Z`: the workgroup size.
    WorkgroupSize,
}

impl Builtin {
    /// Whether every invocation of a workgroup sees the same value.
    pub fn is_uniform(self) -> bool {
        matches!(self, Builtin::GroupId | Builtin::NumGroups | Builtin::WorkgroupSize)
    }
}

/// Unary operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UnaryOp {
    /// `-x` (f32, i32; i32 wraps).
    Neg,
    /// `!x`: logical not of a bool, bitwise not of an integer.
    Not,
}

/// Binary operators.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BinaryOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` on integers (truncating). f32 division is the library's `div`.
    Div,
    /// `%` on integers (sign of the dividend).
    Rem,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<<` (amount < 32).
    Shl,
    /// `>>` (arithmetic for i32; amount < 32).
    Shr,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `&&` (short-circuit).
    And,
    /// `||` (short-circuit).
    Or,
}

impl BinaryOp {
    /// The operator's source spelling.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            And => "&&",
            Or => "||",
        }
    }

    /// True for the six comparisons.
    pub fn is_comparison(self) -> bool {
        use BinaryOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }
}

/// Built-in operations: each has one defined result on every backend, but for the
/// hardware approximations of `fast` kernels (`fast_exp`, `fast_exp2`) and the layout of
/// `panel_word`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intrinsic {
    /// `min(a, b)` = `a < b ? a : b` (no NaN special case; f32, i32, u32).
    Min,
    /// `max(a, b)` = `a > b ? a : b`.
    Max,
    /// `abs(x)`: clears the sign bit of an f32; i32 wraps at `i32::MIN`.
    Abs,
    /// `clamp(x, lo, hi)` = `min(max(x, lo), hi)`.
    Clamp,
    /// `fma(a, b, c)` = `a * b + c` with one rounding (`f32::mul_add`).
    Fma,
    /// `count_ones(x)`: population count of an integer's bits, as u32.
    CountOnes,
    /// `f16_bits_to_f32(u)`: the binary16 in the low 16 bits of `u`, widened exactly.
    F16BitsToF32,
    /// `bf16_bits_to_f32(u)`: the bfloat16 in the low 16 bits of `u`, widened exactly.
    Bf16BitsToF32,
    /// `f32_to_f16_bits(x)`: the binary16 nearest `x` (ties to even; subnormal halves
    /// kept, ±inf past the largest, a NaN stays a NaN) in the low 16 bits of a u32, the
    /// high 16 zero: the rounding of a store to an `f16` buffer, as a value. One
    /// instruction on NVIDIA (`cvt.rn.f16.f32`) where a kernel's own rounding of the
    /// bits takes a dozen.
    F32ToF16Bits,
    /// `funnel_shr(lo, hi, s)`: the low 32 bits of the 64-bit `hi:lo` shifted right by
    /// `s & 31` (so `lo` itself when `s & 31 = 0`); u32. A 32-bit window of a bit stream
    /// at any offset in one instruction on NVIDIA (`SHF.R`).
    FunnelShr,
    /// `fast_exp(x)`: e^x by the hardware's approximation (CUDA `__expf`, GLSL `exp`,
    /// MSL `fast::exp`), f32; only in `fast` kernels, which are checked by tolerance. The
    /// interpreter computes e^x in f64 and rounds it to f32.
    FastExp,
    /// `fast_exp2(x)`: 2^x by the hardware's approximation (CUDA `ex2.approx.ftz`, GLSL
    /// `exp2`, MSL `fast::exp2`), f32; only in `fast` kernels. The interpreter computes
    /// 2^x in f64 and rounds it to f32.
    FastExp2,
    /// `panel_word(row, chunk, rows)`: the word of a panel of `rows` rows where 16-byte
    /// chunk `chunk` (0 … 15: f16 values 8·chunk …) of row `row` starts (docs/DSL.md,
    /// "Panels"), u32. Each backend has its own layout (the interpreter and CUDA the
    /// 128-byte swizzle of Hopper's `wgmma`, GLSL and MSL rows of 68 words), so it is
    /// for placing a panel's values only; only in `fast` kernels.
    PanelWord,
}

impl Intrinsic {
    /// Every intrinsic.
    pub const ALL: [Intrinsic; 13] = [
        Intrinsic::Min,
        Intrinsic::Max,
        Intrinsic::Abs,
        Intrinsic::Clamp,
        Intrinsic::Fma,
        Intrinsic::CountOnes,
        Intrinsic::F16BitsToF32,
        Intrinsic::Bf16BitsToF32,
        Intrinsic::F32ToF16Bits,
        Intrinsic::FunnelShr,
        Intrinsic::FastExp,
        Intrinsic::FastExp2,
        Intrinsic::PanelWord,
    ];

    /// The DSL spelling.
    pub fn dsl_name(self) -> &'static str {
        match self {
            Intrinsic::Min => "min",
            Intrinsic::Max => "max",
            Intrinsic::Abs => "abs",
            Intrinsic::Clamp => "clamp",
            Intrinsic::Fma => "fma",
            Intrinsic::CountOnes => "count_ones",
            Intrinsic::F16BitsToF32 => "f16_bits_to_f32",
            Intrinsic::Bf16BitsToF32 => "bf16_bits_to_f32",
            Intrinsic::F32ToF16Bits => "f32_to_f16_bits",
            Intrinsic::FunnelShr => "funnel_shr",
            Intrinsic::FastExp => "fast_exp",
            Intrinsic::FastExp2 => "fast_exp2",
            Intrinsic::PanelWord => "panel_word",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Intrinsic::Abs
            | Intrinsic::CountOnes
            | Intrinsic::F16BitsToF32
            | Intrinsic::Bf16BitsToF32
            | Intrinsic::F32ToF16Bits
            | Intrinsic::FastExp
            | Intrinsic::FastExp2 => 1,
            Intrinsic::Min | Intrinsic::Max => 2,
            Intrinsic::Clamp | Intrinsic::Fma | Intrinsic::FunnelShr | Intrinsic::PanelWord => 3,
        }
    }

    /// Looks an intrinsic up by its DSL name.
    pub fn parse(name: &str) -> Option<Intrinsic> {
        Intrinsic::ALL.into_iter().find(|i| i.dsl_name() == name)
    }
}

/// Expression kinds.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExprKind {
    /// A constant.
    Lit(Literal),
    /// A scalar local.
    Var(VarId),
    /// A push or spec parameter.
    Param(ParamId),
    /// A built-in id component (0 = x, 1 = y, 2 = z).
    Builtin {
        /// Which built-in.
        builtin: Builtin,
        /// Component.
        axis: u8,
    },
    /// A unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operation.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `place[index]`: buffer loads convert to the 32-bit value type.
    Index {
        /// What is read.
        place: Place,
        /// Element index.
        index: Box<Expr>,
    },
    /// `select(cond, a, b)`: both sides are evaluated.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `x as T`: value conversion (f32→int truncates and must be in range;
    /// int→f32 rounds to nearest even; bool→int gives 0 / 1).
    Cast(Box<Expr>),
    /// Bit reinterpretation between f32, i32 and u32 (`to_bits`, `from_bits`).
    BitCast(Box<Expr>),
    /// An exact intrinsic.
    Intrinsic(Intrinsic, Vec<Expr>),
    /// A call to a library function in [`Kernel::functions`].
    Call {
        /// Function name.
        func: String,
        /// Arguments.
        args: Vec<Expr>,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The guarantee kernels rely on for per-row state ([`SlotLayout::ROW_SLOTS`]):
    /// slots e and e' of one invocation with equal `(e / 2) % 2` hold the same row, in
    /// every layout.
    #[test]
    fn a_slots_row_depends_on_its_row_entry_alone() {
        for layout in SlotLayout::ALL {
            for lane in 0..32 {
                for e in 0..TILE_SLOTS {
                    let entry = (e / 2) % SlotLayout::ROW_SLOTS;
                    assert_eq!(layout.coords(lane, e).0, layout.coords(lane, 2 * entry).0, "{layout:?} lane {lane} slot {e}");
                }
            }
        }
    }

    /// Slots 2k and 2k + 1 of an invocation hold columns c and c + 1 of one row, c even,
    /// in every layout: what a `store_words` of a row's pairs relies on.
    #[test]
    fn slot_pairs_are_neighbours_in_a_row_from_an_even_column() {
        for layout in SlotLayout::ALL {
            for lane in 0..32 {
                for k in 0..TILE_SLOTS / 2 {
                    let ((r0, c0), (r1, c1)) = (layout.coords(lane, 2 * k), layout.coords(lane, 2 * k + 1));
                    assert!(r0 == r1 && c1 == c0 + 1 && c0 % 2 == 0, "{layout:?} lane {lane} pair {k}");
                }
            }
        }
        // The negative control: slots 1 and 2 are not such a pair (another row under
        // the fragments' layout, an odd first column under the row pairs').
        for layout in SlotLayout::ALL {
            let ((r0, c0), (r1, c1)) = (layout.coords(5, 1), layout.coords(5, 2));
            assert!(r0 != r1 || c1 != c0 + 1 || c0 % 2 != 0, "{layout:?}");
        }
    }

    /// The negative control: a per-slot entry other than `(e / 2) % 2` (here `e % 2`)
    /// puts slots of different rows together under the interpreter's layout.
    #[test]
    fn another_entry_rule_mixes_rows() {
        let l = SlotLayout::Fragments;
        let mixed = (0..32).any(|lane| (0..TILE_SLOTS).any(|e| l.coords(lane, e).0 != l.coords(lane, e % 2).0));
        assert!(mixed);
    }
}
