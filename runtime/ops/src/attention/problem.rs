//! One decode-attention problem (queries, a paged or contiguous KV cache, options), its
//! checks before launch, and its execution as chunk + combine on any backend.

use super::format::KvFormat;
use crate::Device;
use onekernel_dsl::manifest::KernelManifest;
use onekernel_dsl::types::{Literal, StorageType};
use onekernel_runtime::{Args, BackendError, HostBuffer, Launch};

/// The chunk kernel's largest chunk, and the most tokens one of its workgroups takes,
/// where it stages K (`async_k`, backends whose copies are asynchronous).
pub const MAX_CHUNK: u32 = 512;

/// The largest chunk of the variant that reads K in place (no `async_k`): it keeps its
/// shared memory at 9 KiB (docs/PERFORMANCE.md).
pub const MAX_UNSTAGED_CHUNK: u32 = 256;

/// The largest fast-mode chunk the chunk kernel takes on a backend with (or without)
/// asynchronous copies.
pub fn max_fast_chunk(async_copies: bool) -> u32 {
    if async_copies {
        MAX_CHUNK
    } else {
        MAX_UNSTAGED_CHUNK
    }
}

/// The deterministic mode's fixed chunk: tokens `[128·i, 128·i + 128)` of a sequence of
/// at most [`DETERMINISTIC_LONG_AFTER`] tokens.
pub const DETERMINISTIC_CHUNK: u32 = 128;

/// Sequences longer than this take [`DETERMINISTIC_LONG_CHUNK`]-token chunks in
/// deterministic mode: the rule reads a sequence's own length only, so results stay
/// batch-invariant. Up to 2048 tokens the 128-token chunks keep short sequences spread
/// over the SMs; above, one 256-token chunk per workgroup is the fast mode's shape on
/// Vulkan, and two per workgroup (`long_pairs`) the fast mode's 512-token workgroups on
/// CUDA. Measured on the H200 (docs/PERFORMANCE.md): 2048
/// instead of 4096 took CUDA's deterministic overhead at 64 × 4096 from +21 % to +11 %
/// and at 16 × 4096 from +15 % to +8 %, at the cost of 1 × 4096 (+4 % → +10 % on CUDA,
/// −0.5 % → +16 % on Vulkan, where 128 workgroups of 256 tokens replace 256 of 128).
pub const DETERMINISTIC_LONG_AFTER: u32 = 2048;

/// The deterministic chunk of a sequence longer than [`DETERMINISTIC_LONG_AFTER`]:
/// tokens `[256·i, 256·i + 256)`, one per workgroup.
pub const DETERMINISTIC_LONG_CHUNK: u32 = 256;

/// Workgroups of two deterministic chunks below which a launch takes one chunk per
/// workgroup instead: fewer is less than a wave on the H200 (132 SMs, four resident
/// workgroups each), and twice as many half-length workgroups finish sooner. Either
/// way gives the same bits (docs/PERFORMANCE.md).
pub const DETERMINISTIC_PAIR_MIN_GROUPS: u32 = 512;

/// The most combine workgroups ((sequence, head) pairs) for which the combine requests
/// its first chunks before the maximum (`early_loads`). Measured on the H200: the
/// variant took B = 1 from 10.4 to 8.0 µs and 16 × 32 pairs from 7.8 to 7.6, but 64 × 32
/// pairs from 14.4 to 16.5 (its extra live values cost workgroups per SM once the
/// launch is more than a wave); docs/PERFORMANCE.md.
pub const EARLY_COMBINE_MAX_PAIRS: u32 = 512;

/// Whether a combine launch of `pairs` workgroups uses the `early_loads` variant.
pub fn early_combine_loads(pairs: u32) -> bool {
    pairs <= EARLY_COMBINE_MAX_PAIRS
}

/// The largest chunk `attn_decode_chunk_mma` is given: its online softmax takes a chunk
/// of any length in one workgroup; past 65536 tokens a workgroup per chunk leaves all but
/// the longest batches with fewer workgroups than one H200 holds at once.
pub const TENSOR_CORE_MAX_CHUNK: u32 = 65536;

/// The chunk of [`Split::tensor_cores_deterministic`]: fixed, so a sequence's chunks,
/// their workgroups and the combine's merge order depend on its own length only.
pub const TENSOR_CORE_DETERMINISTIC_CHUNK: u32 = 256;

/// Why a problem could not run.
#[derive(Debug, thiserror::Error)]
pub enum AttentionError {
    /// The problem is malformed; nothing was launched. Prefill's messages start with
    /// `prefill:`, and those of a kernel's limits name the kernel.
    #[error("attention: {0}")]
    Invalid(String),
    /// The manifest lacks a kernel or variant.
    #[error("attention: {0}")]
    Manifest(String),
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// How the KV sequence is split into chunks.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Split {
    /// Fixed chunks of [`DETERMINISTIC_CHUNK`] tokens from token 0 for sequences of at
    /// most [`DETERMINISTIC_LONG_AFTER`] tokens, of [`DETERMINISTIC_LONG_CHUNK`] tokens
    /// for longer ones: batch-invariant. A workgroup takes one or two of them, as
    /// [`DecodeProblem::plan`] chooses from the work; the bits are the same either way.
    Deterministic,
    /// The deterministic split with `chunks_per_group` (1 or 2) chunks per workgroup
    /// whatever the work: the same bits as [`Split::Deterministic`] (for tests and
    /// benchmarks).
    DeterministicGrouped {
        /// Chunks per workgroup, 1 or 2.
        chunks_per_group: u32,
    },
    /// The deterministic split with another length above which sequences take
    /// [`DETERMINISTIC_LONG_CHUNK`]-token chunks, and optionally a fixed number of
    /// 128-token chunks per workgroup: batch-invariant for any fixed `long_after` (a
    /// sequence's bits depend on it); for tests, which reach the long path with short
    /// sequences.
    DeterministicLongAfter {
        /// Longest sequence split into 128-token chunks.
        long_after: u32,
        /// Chunks per workgroup (1 or 2; `None`: as [`Split::Deterministic`]): 128-token
        /// chunks of short sequences, and 256-token chunks where every sequence is long
        /// and the backend stages K ([`DecodeProblem::plan`]).
        chunks_per_group: Option<u32>,
    },
    /// Chunks of `chunk_tokens` chosen by the caller from the work: 1 … 512 where the
    /// backend stages K (`async_copies`), 1 … 256 otherwise ([`max_fast_chunk`]).
    Fast {
        /// Tokens per chunk.
        chunk_tokens: u32,
    },
    /// Chunks of `chunk_tokens` (1 … [`TENSOR_CORE_MAX_CHUNK`]) chosen by the caller,
    /// one workgroup each, scored and summed on tensor cores by `attn_decode_chunk_mma`
    /// (class `fast`: within a tolerance of the reference, not bitwise; f16 K and V,
    /// D = 128, at most sixteen query heads per KV head, no softcap, no ALiBi:
    /// [`DecodeProblem::check_tensor_cores`]).
    TensorCores {
        /// Tokens per chunk.
        chunk_tokens: u32,
        /// Buffers of the kernel's copy pipeline, each a 64-token K/V block of 34 KiB: 1
        /// (44.75 KiB of shared memory in all), 2 or 3 (blocks in flight while one is
        /// used, where copies are asynchronous). The runtime takes the deepest up to this
        /// one whose shared memory the device offers (`DeviceInfo::max_shared_bytes`:
        /// one buffer on NVIDIA's Vulkan, 48 KiB). The results are the same.
        stages: u32,
    },
}

impl Split {
    /// Tensor cores with [`TENSOR_CORE_DETERMINISTIC_CHUNK`]-token chunks whatever the
    /// batch: `attn_decode_chunk_mma` computes each chunk on its own and the combine merges
    /// a sequence's chunks in an order set by their number, so a sequence's result does
    /// not depend on the batch it is in, the grid or the page layout, and one device
    /// repeats its bits (DESIGN.md's `deterministic` class: `tests/tests/attention_tensor_cores.rs`
    /// checks both); against the reference it is within the `fast` tolerance.
    pub fn tensor_cores_deterministic() -> Split {
        Split::TensorCores { chunk_tokens: TENSOR_CORE_DETERMINISTIC_CHUNK, stages: 3 }
    }

    /// Whether this is the `exact` kernel's batch-invariant split (the tensor-core
    /// splits are not, except [`Split::tensor_cores_deterministic`]'s fixed chunks).
    pub fn is_deterministic(self) -> bool {
        !matches!(self, Split::Fast { .. } | Split::TensorCores { .. })
    }

    /// The longest sequence a deterministic split cuts into 128-token chunks (the fast
    /// split: every sequence's chunks are the caller's).
    pub fn long_after(self) -> u32 {
        match self {
            Split::DeterministicLongAfter { long_after, .. } => long_after,
            _ => DETERMINISTIC_LONG_AFTER,
        }
    }

    /// Tokens per partial result (chunk) and per workgroup of a sequence of `len` tokens,
    /// given the launch's `tokens` from [`DecodeProblem::split_tokens`]: those, except a
    /// deterministic sequence longer than [`Split::long_after`], which takes one
    /// [`DETERMINISTIC_LONG_CHUNK`]-token chunk per workgroup (the kernels apply the same
    /// rule through `det_long`).
    pub fn sequence_tokens(self, tokens: (u32, u32), len: u32) -> (u32, u32) {
        if self.is_deterministic() && len > self.long_after() {
            (DETERMINISTIC_LONG_CHUNK, DETERMINISTIC_LONG_CHUNK)
        } else {
            tokens
        }
    }

    /// Deterministic chunks per workgroup the split asks for (`None`: chosen from the work).
    pub fn chunks_per_group(self) -> Option<u32> {
        match self {
            Split::DeterministicGrouped { chunks_per_group } => Some(chunks_per_group),
            Split::DeterministicLongAfter { chunks_per_group, .. } => chunks_per_group,
            _ => None,
        }
    }
}

/// How one launch cuts its sequences (see [`DecodeProblem::plan`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct ChunkPlan {
    /// The split asked for.
    pub split: Split,
    /// Tokens per partial result (chunk) of the launch's short sequences.
    pub chunk_tokens: u32,
    /// Tokens per workgroup of the launch's short sequences, or of its paired long ones
    /// where `long_pairs` (the chunk kernel's `chunk_tokens`).
    pub group_tokens: u32,
    /// Deterministic launches whose sequences are all long: two
    /// [`DETERMINISTIC_LONG_CHUNK`]-token chunks per workgroup, run by the staged fast
    /// variant (`long_pairs`; the same bits as one chunk per workgroup).
    pub long_pairs: bool,
}

impl ChunkPlan {
    /// Tokens per partial result and per workgroup of a sequence of `len` tokens.
    pub fn sequence_tokens(&self, len: u32) -> (u32, u32) {
        let (c, g) = self.split.sequence_tokens((self.chunk_tokens, self.group_tokens), len);
        if self.long_pairs && len > self.split.long_after() {
            (c, self.group_tokens)
        } else {
            (c, g)
        }
    }
}

/// A decode step: one query token per sequence against a KV cache in the layout of
/// `tests/fixtures/attention/README.md` (`[n_pages][page_size][n_kv_heads][D]`).
#[derive(Clone, Debug)]
pub struct DecodeProblem {
    /// D.
    pub head_dim: u32,
    /// Query heads Hq (a multiple of `n_kv_heads`).
    pub n_heads: u32,
    /// KV heads Hkv.
    pub n_kv_heads: u32,
    /// Tokens per page P.
    pub page_size: u32,
    /// Entries per sequence in the block table (and the contiguous layout's pages).
    pub pages_per_seq: u32,
    /// Valid tokens of each sequence (≥ 1); its length is the batch B.
    pub kv_len: Vec<u32>,
    /// K format.
    pub k_format: KvFormat,
    /// V format.
    pub v_format: KvFormat,
    /// K cache image.
    pub k: Vec<u8>,
    /// V cache image.
    pub v: Vec<u8>,
    /// `[B][pages_per_seq]` physical pages, −1 unused; `None`: sequence b owns pages
    /// `b·pages_per_seq …`.
    pub block_table: Option<Vec<i32>>,
    /// `[B][Hq][D]` queries.
    pub q: Vec<f32>,
    /// Multiplies q·k.
    pub scale: f32,
    /// Logit softcap (0 = off).
    pub softcap: f32,
    /// ALiBi `max_bias` (0 = off).
    pub max_bias: f32,
    /// `[B][pages_per_seq·P]` additive mask, f16 values.
    pub mask: Option<Vec<f32>>,
    /// `[Hq]` sink logits.
    pub sinks: Option<Vec<f32>>,
    /// Elements of a V row where they differ from K's `head_dim` (MLA: K rows of 576,
    /// V rows of 512); `None`: `head_dim`. The output is `[B][Hq][V elements]`.
    pub v_head_dim: Option<u32>,
}

/// The largest K row of `attn_decode_wide` (its score pass takes any number of 32-element
/// slices; this bounds a query's registers-free staging and the checks' arithmetic).
pub const WIDE_MAX_K_DIM: u32 = 1024;

/// The most chunks per sequence that the tensor-core chunk kernel merges itself (its
/// `finish` variant: the last of a sequence's chunks to finish reads all their partial
/// results, four per dimension at most, all requested before any is added); beyond,
/// the combine merges them, spreading a sequence's results over a workgroup per head
/// where one workgroup would read them all (docs/PERFORMANCE.md, "Decode attention").
pub const TENSOR_CORE_MERGE_CHUNKS: u32 = 4;

/// Whether [`DecodeProblem::run`] merges a tensor-core step's chunks in the chunk kernel
/// on `backend` (up to [`TENSOR_CORE_MERGE_CHUNKS`] per sequence): everywhere but
/// Vulkan, where the combine's dispatch, recorded in the same command buffer, cost less
/// than the merge (H200: 16 × 4096 in 141.9–142.4 µs against 143.6–143.9 merged; on CUDA
/// merging took 75.4–75.5 against 76.4–76.8: docs/PERFORMANCE.md, "Decode attention").
pub fn merges_in_chunk_kernel(backend: &onekernel_runtime::DeviceInfo) -> bool {
    backend.backend != "vulkan"
}

/// The largest V row of `attn_decode_wide`: each of its invocations holds 16 dimensions
/// of four heads' sums, 32 invocations per head.
pub const WIDE_MAX_V_DIM: u32 = 512;

/// The spec constants of `m`'s variant with `axes`, with the dimension constants in
/// `dims` (`head_dim`, `k_dim`) set.
pub(super) fn variant_spec(m: &KernelManifest, axes: &[(&str, Literal)], dims: &[(&str, u32)]) -> Result<Vec<(String, Literal)>, AttentionError> {
    let v = m.variant_with(axes).ok_or_else(|| AttentionError::Manifest(format!("kernel `{}` has no variant {axes:?}", m.name)))?;
    Ok(v.spec
        .iter()
        .map(|(n, val)| match dims.iter().find(|(dn, _)| dn == n) {
            Some((_, x)) => (n.clone(), Literal::U32(*x)),
            None => (n.clone(), *val),
        })
        .collect())
}

impl DecodeProblem {
    /// Batch size B.
    pub fn n_seq(&self) -> u32 {
        self.kv_len.len() as u32
    }

    /// Elements of a V row (and of an output row).
    pub fn v_dim(&self) -> u32 {
        self.v_head_dim.unwrap_or(self.head_dim)
    }

    /// Whether the problem runs on `attn_decode_wide`: K rows longer than 256 elements,
    /// V rows of another length than K's, or FP8 rows; `attn_decode_chunk` otherwise.
    pub fn uses_wide(&self) -> bool {
        self.head_dim > 256 || self.v_dim() != self.head_dim || self.k_format.is_fp8() || self.v_format.is_fp8()
    }

    /// Pages in the cache images.
    pub fn n_pages(&self) -> usize {
        self.k.len() / (self.k_format.row_bytes(self.head_dim as usize) * (self.page_size * self.n_kv_heads) as usize).max(1)
    }

    /// Deterministic chunks per workgroup: two, unless that launch would have fewer than
    /// [`DETERMINISTIC_PAIR_MIN_GROUPS`] workgroups or the chunk kernel cannot pair them.
    pub fn deterministic_chunks_per_group(&self) -> u32 {
        if self.pairs_fill_the_device(DETERMINISTIC_CHUNK) && self.pairs_deterministic_chunks() {
            2
        } else {
            1
        }
    }

    /// Whether a launch of two `chunk`-token chunks per workgroup over the longest
    /// sequence still has [`DETERMINISTIC_PAIR_MIN_GROUPS`] workgroups.
    fn pairs_fill_the_device(&self, chunk: u32) -> bool {
        let max_len = self.kv_len.iter().max().copied().unwrap_or(1);
        self.n_seq() * self.n_kv_heads * max_len.div_ceil(2 * chunk) >= DETERMINISTIC_PAIR_MIN_GROUPS
    }

    /// The chunk kernel's V token groups: `128 / (D / 8)` for f16 V with D % 8 = 0,
    /// `128 / (D / 2)` otherwise (`groups` in `attn_decode_chunk`).
    fn v_token_groups(&self) -> u32 {
        let vd = if self.v_format == KvFormat::F16 && self.head_dim.is_multiple_of(8) { 8 } else { 2 };
        128 / (self.head_dim / vd).max(1)
    }

    /// Whether the chunk kernel can hold two deterministic chunks per workgroup: its V
    /// pass needs a token group per chunk (one for other formats than f16 at D > 128).
    /// The kernel applies the same rule (`per` in `attn_decode_chunk`).
    pub fn pairs_deterministic_chunks(&self) -> bool {
        self.v_token_groups() >= 2
    }

    /// Whether the chunk kernel can hold two long deterministic chunks per workgroup
    /// (`long_pairs`): its V pass then takes each chunk's rows in whole blocks of eight
    /// per token group, so at most 32 groups (D ≥ 32 for f16 V, D ≥ 8 otherwise). The
    /// kernel applies the same rule.
    pub fn pairs_long_chunks(&self) -> bool {
        self.v_token_groups() <= 32
    }

    /// The launch's chunking under `split` where the chunk kernel stages K (`staged`) or
    /// not: [`DecodeProblem::split_tokens`], and two long deterministic chunks per
    /// workgroup where the kernel can (staged, [`DecodeProblem::pairs_long_chunks`]) and
    /// every sequence is long, if the split asks for two chunks per workgroup or, left to
    /// the work, the paired launch still has [`DETERMINISTIC_PAIR_MIN_GROUPS`] workgroups.
    pub fn plan(&self, split: Split, staged: bool) -> Result<ChunkPlan, AttentionError> {
        let (chunk_tokens, group_tokens) = self.split_tokens(split, staged)?;
        let all_long = self.kv_len.iter().all(|&l| l > split.long_after());
        let wanted = split.chunks_per_group().map_or_else(|| self.pairs_fill_the_device(DETERMINISTIC_LONG_CHUNK), |c| c == 2);
        let long_pairs = split.is_deterministic() && staged && all_long && self.pairs_long_chunks() && wanted;
        let group_tokens = if long_pairs { 2 * DETERMINISTIC_LONG_CHUNK } else { group_tokens };
        Ok(ChunkPlan { split, chunk_tokens, group_tokens, long_pairs })
    }

    /// Tokens per partial result (chunk) and per workgroup under `split` for the chunk
    /// kernel's variant that stages K (`staged`, see [`max_fast_chunk`]) or reads it in
    /// place, or why the split is invalid for this problem there.
    pub fn split_tokens(&self, split: Split, staged: bool) -> Result<(u32, u32), AttentionError> {
        let most = max_fast_chunk(staged);
        match split {
            Split::Fast { chunk_tokens } if (1..=most).contains(&chunk_tokens) => Ok((chunk_tokens, chunk_tokens)),
            Split::Fast { chunk_tokens } if (1..=MAX_CHUNK).contains(&chunk_tokens) => Err(AttentionError::Invalid(format!(
                "chunks of {chunk_tokens} tokens: the chunk kernel takes at most {most} per workgroup where it reads K in place (backends without asynchronous copies)"
            ))),
            Split::TensorCores { stages, .. } if !(1..=3).contains(&stages) => Err(AttentionError::Invalid(format!("{stages} pipeline stages: 1, 2 or 3"))),
            Split::TensorCores { chunk_tokens, .. } if (1..=TENSOR_CORE_MAX_CHUNK).contains(&chunk_tokens) => Ok((chunk_tokens, chunk_tokens)),
            Split::TensorCores { chunk_tokens, .. } => Err(AttentionError::Invalid(format!("chunks of {chunk_tokens} tokens: 1 … {TENSOR_CORE_MAX_CHUNK} on tensor cores"))),
            Split::Fast { chunk_tokens } => Err(AttentionError::Invalid(format!("chunks of {chunk_tokens} tokens: 1 … {MAX_CHUNK}"))),
            Split::Deterministic => Ok((DETERMINISTIC_CHUNK, DETERMINISTIC_CHUNK * self.deterministic_chunks_per_group())),
            Split::DeterministicGrouped { chunks_per_group: 2 } if !self.pairs_deterministic_chunks() => Err(AttentionError::Invalid(format!(
                "2 deterministic chunks per workgroup: D = {} with {} V has one V token group, so one chunk per workgroup",
                self.head_dim,
                self.v_format.name()
            ))),
            Split::DeterministicGrouped { chunks_per_group: c @ 1..=2 } => Ok((DETERMINISTIC_CHUNK, DETERMINISTIC_CHUNK * c)),
            Split::DeterministicGrouped { chunks_per_group } => Err(AttentionError::Invalid(format!("{chunks_per_group} deterministic chunks per workgroup: 1 or 2"))),
            Split::DeterministicLongAfter { chunks_per_group: None, .. } => self.split_tokens(Split::Deterministic, staged),
            Split::DeterministicLongAfter { chunks_per_group: Some(c), .. } => self.split_tokens(Split::DeterministicGrouped { chunks_per_group: c }, staged),
        }
    }

    /// Rejects a problem `attn_decode_chunk_mma` cannot run ([`Split::TensorCores`]).
    pub fn check_tensor_cores(&self) -> Result<(), AttentionError> {
        let group = self.n_heads / self.n_kv_heads.max(1);
        let why = if self.k_format != KvFormat::F16 || self.v_format != KvFormat::F16 {
            format!("{} K and {} V (it reads f16 only)", self.k_format.name(), self.v_format.name())
        } else if self.head_dim != 128 {
            format!("D = {} (it takes D = 128)", self.head_dim)
        } else if group > 16 {
            format!("{group} query heads per KV head (at most 16: the rows of one tile)")
        } else if self.softcap != 0.0 || self.max_bias != 0.0 {
            "softcap or ALiBi (the exact kernel's options)".to_string()
        } else {
            return Ok(());
        };
        Err(AttentionError::Invalid(format!("tensor-core decode (`attn_decode_chunk_mma`) cannot take {why}")))
    }

    /// Rejects a malformed problem before anything is launched.
    pub fn check(&self) -> Result<(), AttentionError> {
        self.check_with_images(self.k.len(), self.v.len())
    }

    /// [`DecodeProblem::check`] for cache images of `k_bytes` and `v_bytes` held
    /// elsewhere (a prefill step checks its sequences without copying its cache).
    pub(super) fn check_with_images(&self, k_bytes: usize, v_bytes: usize) -> Result<(), AttentionError> {
        let bad = |m: String| Err(AttentionError::Invalid(m));
        let (d, hq, hkv, p, pps, b) = (self.head_dim, self.n_heads, self.n_kv_heads, self.page_size, self.pages_per_seq, self.n_seq());
        if d == 0 || hq == 0 || hkv == 0 || p == 0 || pps == 0 || b == 0 {
            return bad(format!("shapes must be positive (D {d}, Hq {hq}, Hkv {hkv}, P {p}, pages/seq {pps}, B {b})"));
        }
        if hq % hkv != 0 {
            return bad(format!("Hq = {hq} is not a multiple of Hkv = {hkv}"));
        }
        let dv = self.v_dim();
        if dv == 0 {
            return bad("V rows of 0 elements".into());
        }
        if !self.uses_wide() && d % 2 != 0 {
            return bad(format!("D = {d}: the chunk kernel takes even head sizes up to 256"));
        }
        if self.uses_wide() && (d > WIDE_MAX_K_DIM || dv > WIDE_MAX_V_DIM || !d.is_multiple_of(4) || !dv.is_multiple_of(4)) {
            return bad(format!(
                "K rows of {d} and V rows of {dv} elements: the wide kernel (`attn_decode_wide`, for rows over 256 elements, V rows unlike K's, FP8 rows) takes multiples of 4 up to {WIDE_MAX_K_DIM} and {WIDE_MAX_V_DIM}"
            ));
        }
        for (f, dim, side) in [(self.k_format, d, "K"), (self.v_format, dv, "V")] {
            if f.is_block() && dim % 32 != 0 {
                return bad(format!("{} rows are blocks of 32: {side} rows of {dim} elements are not a multiple of 32", f.name()));
            }
            if let KvFormat::Fp8Mixed { fp8_dims } = f {
                if fp8_dims > dim || !fp8_dims.is_multiple_of(4) {
                    return bad(format!("{side}: fp8_mixed with fp8_dims = {fp8_dims}: a multiple of 4 up to the row's {dim} elements"));
                }
            }
        }
        let page_bytes = |f: KvFormat, dim: u32| f.row_bytes(dim as usize) * (p * hkv) as usize;
        let (kp, vp) = (page_bytes(self.k_format, d), page_bytes(self.v_format, dv));
        if k_bytes == 0 || !k_bytes.is_multiple_of(kp) {
            return bad(format!(
                "K holds {} bytes, not a whole number of {}-byte pages ({} × P {p} × Hkv {hkv} × D {d})",
                k_bytes,
                kp,
                self.k_format.name()
            ));
        }
        if !v_bytes.is_multiple_of(vp) || v_bytes / vp != k_bytes / kp {
            return bad(format!(
                "V holds {} bytes; K's {} pages need {} bytes of {}",
                v_bytes,
                k_bytes / kp,
                k_bytes / kp * vp,
                self.v_format.name()
            ));
        }
        let n_pages = k_bytes / kp;
        if self.q.len() != (b * hq * d) as usize {
            return bad(format!("q holds {} values, B × Hq × D = {}", self.q.len(), b * hq * d));
        }
        for (s, &len) in self.kv_len.iter().enumerate() {
            if len == 0 || len > pps * p {
                return bad(format!("`kv_len[{s}]` = {len} tokens; a sequence holds 1 … pages_per_seq × P = {}", pps * p));
            }
            let used = len.div_ceil(p) as usize;
            match &self.block_table {
                Some(t) => {
                    if t.len() != (b * pps) as usize {
                        return bad(format!("the block table holds {} entries, B × pages_per_seq = {}", t.len(), b * pps));
                    }
                    let row = &t[s * pps as usize..][..used];
                    if let Some((i, page)) = row.iter().enumerate().find(|(_, &pg)| pg < 0 || pg as usize >= n_pages) {
                        return bad(format!("block_table[{s}][{i}] = {page} is not a page of the cache (0 … {})", n_pages - 1));
                    }
                }
                None => {
                    if (s + 1) * pps as usize > n_pages {
                        return bad(format!(
                            "contiguous layout: sequence {s} needs pages up to {}, the cache has {n_pages}",
                            (s + 1) * pps as usize - 1
                        ));
                    }
                }
            }
        }
        if let Some(m) = &self.mask {
            if m.len() != (b * pps * p) as usize {
                return bad(format!("the mask holds {} values, B × pages_per_seq × P = {}", m.len(), b * pps * p));
            }
        }
        if let Some(s) = &self.sinks {
            if s.len() != hq as usize {
                return bad(format!("sinks hold {} values, Hq = {hq}", s.len()));
            }
        }
        Ok(())
    }

    /// Runs chunk + combine on `dev`, once or as its timing says ([`crate::Timing`]:
    /// `apart` times the two kernels each as a unit, the combine on the chunk kernel's
    /// last results; otherwise the decode step — both back to back with nothing between
    /// them, as an application runs them — is one unit). On tensor cores with one chunk
    /// per sequence the chunk kernel normalizes and writes the output itself, and on the
    /// backends where [`merges_in_chunk_kernel`] says so, with up to
    /// [`TENSOR_CORE_MERGE_CHUNKS`], the last chunk of each sequence and KV head to
    /// finish merges them (its `finish` variant: the combine's operations, the same
    /// bits); the step is then that one launch. Returns the `[B][Hq][D]` output.
    pub fn run(&self, split: Split, dev: &mut Device) -> Result<Vec<f32>, AttentionError> {
        let merge = merges_in_chunk_kernel(dev.backend().info());
        self.run_merging(split, dev, merge)
    }

    /// [`DecodeProblem::run`] with the merge chosen: with `merge`, a tensor-core step of
    /// two to [`TENSOR_CORE_MERGE_CHUNKS`] chunks per sequence merges in the chunk kernel
    /// on any backend; without, it launches the combine (for comparisons of the two:
    /// the same bits).
    pub fn run_merging(&self, split: Split, dev: &mut Device, merge: bool) -> Result<Vec<f32>, AttentionError> {
        self.check()?;
        if self.uses_wide() {
            return self.run_wide(split, dev);
        }
        let tensor_cores = matches!(split, Split::TensorCores { .. });
        if tensor_cores {
            self.check_tensor_cores()?;
        }
        let kernel = |name: &str| dev.kernel(name).ok_or_else(|| AttentionError::Manifest(format!("`{name}` is not in the manifest")));
        let artifacts = dev.artifacts();
        let chunk_name = if tensor_cores { "attn_decode_chunk_mma" } else { "attn_decode_chunk" };
        let chunk = kernel(chunk_name)?;
        // Asynchronous K staging where the backend's copies are asynchronous (the
        // variants give the same bits for the same chunks; validate proves each on every
        // backend).
        let staged = dev.backend().info().async_copies && chunk.has_spec_constant("async_k");
        let plan = self.plan(split, staged)?;
        let (d, b) = (self.head_dim, self.n_seq());
        let deterministic = split.is_deterministic();
        let long_after = split.long_after();
        // Partial rows and workgroups per (sequence, KV head): the most any sequence needs.
        let (n_chunks, n_groups) = self.kv_len.iter().fold((1, 1), |(nc, ng), &l| {
            let (c, g) = plan.sequence_tokens(l);
            (nc.max(l.div_ceil(c)), ng.max(l.div_ceil(g)))
        });
        let (chunk_tokens, group_tokens) = (plan.chunk_tokens, plan.group_tokens);
        let mut a = self.chunk_args(n_chunks, group_tokens);
        // Few chunks per sequence on tensor cores: the chunk kernel normalizes and writes
        // the output itself (`finish`, the combine's operations), one launch.
        let limit = if merge { TENSOR_CORE_MERGE_CHUNKS } else { 1 };
        let finish = tensor_cores && n_chunks <= limit && chunk.has_spec_constant("finish");
        if tensor_cores {
            // The combine's `sinks` and `out` (a buffer is one across the step's launches).
            // Arrival counters per (sequence, KV head), zero; each launch leaves them so.
            let counters = if finish { (b * self.n_kv_heads) as usize } else { 1 };
            a = a
                .buffer("sinks", HostBuffer::from_f32(self.sinks.as_deref().unwrap_or(&[0.0])))
                .buffer("out", HostBuffer::zeros(StorageType::F32, (b * self.n_heads * self.v_dim()) as usize))
                .buffer("arrivals", HostBuffer::zeros(StorageType::U32, counters))
                .scalar("has_sinks", self.sinks.is_some() as u32);
        } else {
            a = a
                .scalar("softcap", self.softcap)
                .scalar("max_bias", self.max_bias)
                .scalar("k_type", self.k_format.code())
                .scalar("v_type", self.v_format.code())
                .scalar("det_long", long_after);
        }
        // Paired long chunks are the staged fast code's (see `ChunkPlan::long_pairs`).
        let mut axes = vec![("paged", Literal::Bool(self.block_table.is_some()))];
        if chunk.has_spec_constant("deterministic") {
            axes.push(("deterministic", Literal::Bool(deterministic && !plan.long_pairs)));
        }
        if let Split::TensorCores { stages, .. } = split {
            // The deepest pipeline up to the one asked for whose shared memory the
            // device offers (NVIDIA's Vulkan: one buffer); the bits are the same.
            let most = dev.backend().info().max_shared_bytes.unwrap_or(u32::MAX);
            let fits = |s: u32| {
                let mut with = axes.clone();
                with.push(("stages", Literal::U32(s)));
                variant_spec(chunk, &with, &[]).map(|spec| chunk.shared_bytes_for(&spec) <= most)
            };
            let mut depth = stages;
            while depth > 1 && !fits(depth)? {
                depth -= 1;
            }
            axes.push(("stages", Literal::U32(depth)));
            if chunk.has_spec_constant("finish") {
                axes.push(("finish", Literal::Bool(finish)));
            }
        }
        if chunk.has_spec_constant("async_k") {
            axes.push(("async_k", Literal::Bool(staged)));
        }
        if chunk.has_spec_constant("long_pairs") {
            axes.push(("long_pairs", Literal::Bool(plan.long_pairs)));
        } else if plan.long_pairs {
            return Err(AttentionError::Manifest("`attn_decode_chunk` has no `long_pairs` variant".into()));
        }
        // `attn_decode_chunk_mma` takes the page size as a spec constant (one instance per
        // page size), the exact kernels as a push constant (`variant_spec` sets only the
        // variant's own spec constants).
        let chunk_spec = variant_spec(chunk, &axes, &[("head_dim", d), ("page_size", self.page_size)])?;
        let chunk_launch = Launch { kernel: chunk, artifacts, spec: &chunk_spec, groups: [n_groups, self.n_kv_heads, b] };
        if finish {
            let mut only = [a];
            dev.execute(&[chunk_launch], &mut only)?;
            return Ok(only[0].get_buffer("out").map(|o| o.to_f32()).unwrap_or_default());
        }
        let (c, combine, combine_spec) = self.combine(dev, &a, n_chunks, chunk_tokens, deterministic, long_after)?;
        let combine_launch = Launch { kernel: combine, artifacts: dev.artifacts(), spec: &combine_spec, groups: [self.n_heads, self.n_seq(), 1] };
        let mut both = [a, c];
        dev.execute(&[chunk_launch, combine_launch], &mut both)?;
        Ok(both[1].get_buffer("out").map(|o| o.to_f32()).unwrap_or_default())
    }
}

impl DecodeProblem {
    /// What every chunk kernel binds: the queries, the cache images, the table, the
    /// lengths, the mask, zeroed partial results for `n_chunks` chunks per head, and the
    /// shared scalars (`chunk_tokens` as given).
    fn chunk_args(&self, n_chunks: u32, chunk_tokens: u32) -> Args {
        let parts = (self.n_seq() * self.n_heads * n_chunks) as usize;
        Args::new()
            .buffer("q", HostBuffer::from_f32(&self.q))
            .buffer("k", HostBuffer::u32_image(&self.k))
            .buffer("v", HostBuffer::u32_image(&self.v))
            .buffer("block_table", HostBuffer::from_i32(self.block_table.as_deref().unwrap_or(&[0])))
            .buffer("kv_len", HostBuffer::from_u32(&self.kv_len))
            .buffer("mask", HostBuffer::f16_from_f32(self.mask.as_deref().unwrap_or(&[0.0])))
            .buffer("part_m", HostBuffer::zeros(StorageType::F32, parts))
            .buffer("part_l", HostBuffer::zeros(StorageType::F32, parts))
            .buffer("part_acc", HostBuffer::zeros(StorageType::F32, parts * self.v_dim() as usize))
            .scalar("n_heads", self.n_heads)
            .scalar("n_kv_heads", self.n_kv_heads)
            .scalar("page_size", self.page_size)
            .scalar("pages_per_seq", self.pages_per_seq)
            .scalar("n_chunks", n_chunks)
            .scalar("chunk_tokens", chunk_tokens)
            .scalar("scale", self.scale)
            .scalar("has_mask", self.mask.is_some() as u32)
    }

    /// The combine's arguments over the chunk kernel's partial results in `a`, its
    /// manifest entry and its variant's spec constants.
    #[allow(clippy::type_complexity)]
    fn combine<'d>(
        &self,
        dev: &Device<'d>,
        a: &Args,
        n_chunks: u32,
        chunk_tokens: u32,
        deterministic: bool,
        long_after: u32,
    ) -> Result<(Args, &'d KernelManifest, Vec<(String, Literal)>), AttentionError> {
        let combine =
            dev.kernel("attn_decode_combine").ok_or_else(|| AttentionError::Manifest("`attn_decode_combine` is not in the manifest".into()))?;
        let (hq, b) = (self.n_heads, self.n_seq());
        // The combine binds the chunk kernel's partial results (one buffer per name).
        let take = |name: &str| a.get_buffer(name).cloned().ok_or_else(|| AttentionError::Manifest(format!("no `{name}` for the chunk kernel")));
        let c = Args::new()
            .buffer("part_m", take("part_m")?)
            .buffer("part_l", take("part_l")?)
            .buffer("part_acc", take("part_acc")?)
            .buffer("kv_len", HostBuffer::from_u32(&self.kv_len))
            .buffer("sinks", a.get_buffer("sinks").cloned().unwrap_or_else(|| HostBuffer::from_f32(self.sinks.as_deref().unwrap_or(&[0.0]))))
            .buffer("out", a.get_buffer("out").cloned().unwrap_or_else(|| HostBuffer::zeros(StorageType::F32, (b * hq * self.v_dim()) as usize)))
            .scalar("n_heads", hq)
            .scalar("n_chunks", n_chunks)
            .scalar("chunk_tokens", chunk_tokens)
            .scalar("has_sinks", self.sinks.is_some() as u32)
            .scalar("det_long", long_after);
        let mut combine_axes = vec![("deterministic", Literal::Bool(deterministic))];
        if combine.has_spec_constant("early_loads") {
            combine_axes.push(("early_loads", Literal::Bool(early_combine_loads(b * hq))));
        }
        let spec = variant_spec(combine, &combine_axes, &[("head_dim", self.v_dim())])?;
        Ok((c, combine, spec))
    }

    /// Tokens per chunk of a sequence of `len` tokens in `attn_decode_wide` under `split`
    /// (the kernel's and the combine's rule): deterministic 128, or 256 past the split's
    /// `long_after`; fast, the caller's chunk.
    pub fn wide_chunk_tokens(split: Split, len: u32) -> Result<u32, AttentionError> {
        match split {
            Split::Fast { chunk_tokens } if (1..=MAX_CHUNK).contains(&chunk_tokens) => Ok(chunk_tokens),
            Split::Fast { chunk_tokens } => Err(AttentionError::Invalid(format!("chunks of {chunk_tokens} tokens: 1 … {MAX_CHUNK}"))),
            Split::TensorCores { .. } => Err(AttentionError::Invalid(
                "tensor-core decode (`attn_decode_chunk_mma`) takes f16 rows of 128 elements; this problem runs on `attn_decode_wide`".into(),
            )),
            _ if len > split.long_after() => Ok(DETERMINISTIC_LONG_CHUNK),
            _ => Ok(DETERMINISTIC_CHUNK),
        }
    }

    /// `attn_decode_wide` + `attn_decode_combine` ([`DecodeProblem::uses_wide`]); the
    /// deterministic splits' chunks per workgroup do not apply (a workgroup takes one
    /// chunk).
    fn run_wide(&self, split: Split, dev: &mut Device) -> Result<Vec<f32>, AttentionError> {
        let chunk = dev.kernel("attn_decode_wide").ok_or_else(|| AttentionError::Manifest("`attn_decode_wide` is not in the manifest".into()))?;
        let (d, dv, hq, hkv, b) = (self.head_dim, self.v_dim(), self.n_heads, self.n_kv_heads, self.n_seq());
        let deterministic = split.is_deterministic();
        let long_after = split.long_after();
        let mut n_chunks = 1;
        for &len in &self.kv_len {
            n_chunks = n_chunks.max(len.div_ceil(Self::wide_chunk_tokens(split, len)?));
        }
        let chunk_tokens = match split {
            Split::Fast { chunk_tokens } => chunk_tokens,
            _ => DETERMINISTIC_CHUNK,
        };
        let a = self
            .chunk_args(n_chunks, chunk_tokens)
            .scalar("softcap", self.softcap)
            .scalar("max_bias", self.max_bias)
            .scalar("k_type", self.k_format.code())
            .scalar("v_type", self.v_format.code())
            .scalar("k_fp8_dims", self.k_format.fp8_dims(d))
            .scalar("v_fp8_dims", self.v_format.fp8_dims(dv))
            .scalar("det_long", long_after);
        let axes = [("paged", Literal::Bool(self.block_table.is_some())), ("deterministic", Literal::Bool(deterministic))];
        let spec = variant_spec(chunk, &axes, &[("k_dim", d), ("head_dim", dv)])?;
        let blocks = (hq / hkv).div_ceil(16);
        let chunk_launch = Launch { kernel: chunk, artifacts: dev.artifacts(), spec: &spec, groups: [n_chunks, hkv * blocks, b] };
        let (c, combine, combine_spec) = self.combine(dev, &a, n_chunks, chunk_tokens, deterministic, long_after)?;
        let combine_launch = Launch { kernel: combine, artifacts: dev.artifacts(), spec: &combine_spec, groups: [self.n_heads, self.n_seq(), 1] };
        let mut both = [a, c];
        dev.execute(&[chunk_launch, combine_launch], &mut both)?;
        Ok(both[1].get_buffer("out").map(|o| o.to_f32()).unwrap_or_default())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn only_deterministic_sequences_past_the_threshold_take_long_chunks() {
        let short = (DETERMINISTIC_CHUNK, 2 * DETERMINISTIC_CHUNK);
        let long = (DETERMINISTIC_LONG_CHUNK, DETERMINISTIC_LONG_CHUNK);
        assert_eq!(Split::Deterministic.sequence_tokens(short, DETERMINISTIC_LONG_AFTER), short);
        assert_eq!(Split::Deterministic.sequence_tokens(short, DETERMINISTIC_LONG_AFTER + 1), long);
        assert_eq!(Split::DeterministicGrouped { chunks_per_group: 1 }.sequence_tokens((128, 128), 5000), long);
        let moved = Split::DeterministicLongAfter { long_after: 200, chunks_per_group: None };
        assert_eq!((moved.sequence_tokens(short, 200), moved.sequence_tokens(short, 201)), (short, long));
        // The fast split keeps the caller's chunks at any length.
        assert_eq!(Split::Fast { chunk_tokens: 512 }.sequence_tokens((512, 512), 1 << 20), (512, 512));
    }

    /// A problem of `kv_len` sequences at Hkv 8, D 128 (the checks are not run: `plan`
    /// reads the shapes and lengths only).
    pub(crate) fn lengths(kv_len: &[u32], head_dim: u32, v_format: KvFormat) -> DecodeProblem {
        DecodeProblem {
            head_dim,
            n_heads: 32,
            n_kv_heads: 8,
            page_size: 16,
            pages_per_seq: 1,
            kv_len: kv_len.to_vec(),
            k_format: KvFormat::F16,
            v_format,
            k: Vec::new(),
            v: Vec::new(),
            block_table: None,
            q: Vec::new(),
            scale: 1.0,
            softcap: 0.0,
            max_bias: 0.0,
            mask: None,
            sinks: None,
            v_head_dim: None,
        }
    }

    #[test]
    fn long_chunks_pair_only_in_staged_all_long_launches_with_enough_workgroups() {
        let long = DETERMINISTIC_LONG_AFTER + 1;
        let pairs = |p: &DecodeProblem, split, staged| p.plan(split, staged).unwrap().long_pairs;
        // 16 × 32768 at Hkv 8: 4096 pairs of 256-token chunks.
        let big = lengths(&[32768; 16], 128, KvFormat::F16);
        assert!(pairs(&big, Split::Deterministic, true));
        let plan = big.plan(Split::Deterministic, true).unwrap();
        assert_eq!(plan.sequence_tokens(32768), (DETERMINISTIC_LONG_CHUNK, 2 * DETERMINISTIC_LONG_CHUNK));
        // Not without staging (Vulkan), not in fast mode, not when one sequence is short.
        assert!(!pairs(&big, Split::Deterministic, false));
        assert!(!pairs(&big, Split::Fast { chunk_tokens: 512 }, true));
        let mut mixed = big.kv_len.clone();
        mixed[3] = DETERMINISTIC_LONG_AFTER;
        assert!(!pairs(&lengths(&mixed, 128, KvFormat::F16), Split::Deterministic, true));
        // Fewer than DETERMINISTIC_PAIR_MIN_GROUPS paired workgroups: one chunk each,
        // unless the split asks for two; one chunk when it asks for one.
        let small = lengths(&[long; 2], 128, KvFormat::F16);
        assert!(!pairs(&small, Split::Deterministic, true));
        assert!(pairs(&small, Split::DeterministicGrouped { chunks_per_group: 2 }, true));
        assert!(!pairs(&big, Split::DeterministicGrouped { chunks_per_group: 1 }, true));
        assert_eq!(small.plan(Split::Deterministic, true).unwrap().sequence_tokens(long), (DETERMINISTIC_LONG_CHUNK, DETERMINISTIC_LONG_CHUNK));
        // More than 32 V token groups (D = 16 with f16 V): a chunk's rows are not whole
        // blocks of eight per group, so the kernel's rule refuses the pair, and so does
        // the runtime's; D = 32 (32 groups) pairs.
        assert!(!pairs(&lengths(&[32768; 16], 16, KvFormat::F16), Split::Deterministic, true));
        assert!(pairs(&lengths(&[32768; 16], 32, KvFormat::F16), Split::Deterministic, true));
    }

    #[test]
    fn anchor_shapes_of_4096_tokens_take_the_measured_deterministic_chunking() {
        // ANCHORS.md's 16 × 4096 and 64 × 4096 (Hkv 8): 256-token chunks, two per
        // workgroup where K is staged; 1 × 4096: one per workgroup (64 pairs would be
        // half a wave); 2048 tokens: 128-token chunks.
        for b in [16, 64] {
            let p = lengths(&vec![4096; b], 128, KvFormat::F16);
            let plan = p.plan(Split::Deterministic, true).unwrap();
            assert!(plan.long_pairs, "B = {b}");
            assert_eq!(plan.sequence_tokens(4096), (256, 512), "B = {b}");
            assert_eq!(p.plan(Split::Deterministic, false).unwrap().sequence_tokens(4096), (256, 256), "B = {b}");
        }
        let one = lengths(&[4096], 128, KvFormat::F16);
        assert_eq!(one.plan(Split::Deterministic, true).unwrap().sequence_tokens(4096), (256, 256));
        let short = lengths(&[2048], 128, KvFormat::F16);
        assert_eq!(short.plan(Split::Deterministic, true).unwrap().sequence_tokens(2048), (128, 128));
    }
}
