//! The determinism grid of decode attention: for every point, a target
//! sequence's output in deterministic mode must be the same bits alone (B = 1,
//! contiguous) and inside batches of B = 2, 8, 33 other sequences (paged, shuffled
//! block table), and two runs must agree. Negative control per point: the fast mode
//! with a batch-dependent chunking, which should change bits.
//!
//! Full grid: D ∈ {64, 128, 256} × KV ∈ {256, 1024, 4096} × GQA ∈ {1, 2, 4} × mask /
//! ALiBi / sinks each on or off (216 points; the target has KV tokens, the others random
//! lengths 1 … 1.5·KV; softcap 30 rides with sinks). K/V formats rotate over all 25
//! pairs of f32 / f16 / bf16 / q8_0 / q4_0 along the grid. [`ci_grid`] is the subset the
//! interpreter and lavapipe run in CI.

use super::batch::{pack, BatchShape, Sequence};
use super::format::KvFormat;
use super::problem::{max_fast_chunk, AttentionError, DecodeProblem, Split, TENSOR_CORE_MAX_CHUNK};
use super::reference::{compare, reference};
use crate::Device;
use serde::Serialize;

/// One point of the grid.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct GridPoint {
    /// D.
    pub head_dim: u32,
    /// The target sequence's tokens.
    pub kv: u32,
    /// Hq / Hkv (Hkv = 2).
    pub gqa: u32,
    /// Additive mask on.
    pub mask: bool,
    /// ALiBi (max_bias 8) on; it scales the mask.
    pub alibi: bool,
    /// Per-head sinks (and softcap 30) on.
    pub sinks: bool,
    /// Batch sizes compared against B = 1.
    #[serde(skip)]
    pub batches: &'static [u32],
    /// K format.
    #[serde(serialize_with = "format_name")]
    pub k_format: KvFormat,
    /// V format.
    #[serde(serialize_with = "format_name")]
    pub v_format: KvFormat,
}

fn format_name<S: serde::Serializer>(f: &KvFormat, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(f.name())
}

const ALL_BATCHES: &[u32] = &[2, 8, 33];
const SMALL_BATCHES: &[u32] = &[2, 8];

fn points(dims: &[u32], kvs: &[u32], gqas: &[u32], options: &[(bool, bool, bool)], batches: impl Fn(u32) -> &'static [u32]) -> Vec<GridPoint> {
    let mut out = Vec::new();
    for &head_dim in dims {
        for &kv in kvs {
            for &gqa in gqas {
                for &(mask, alibi, sinks) in options {
                    let i = out.len();
                    out.push(GridPoint {
                        head_dim,
                        kv,
                        gqa,
                        mask,
                        alibi,
                        sinks,
                        batches: batches(head_dim),
                        k_format: KvFormat::ALL[i % 5],
                        v_format: KvFormat::ALL[(i / 5 + i) % 5],
                    });
                }
            }
        }
    }
    out
}

/// All 216 points of the determinism grid, each with B = 2, 8, 33.
pub fn full_grid() -> Vec<GridPoint> {
    let options: Vec<(bool, bool, bool)> = (0..8).map(|i| (i & 1 != 0, i & 2 != 0, i & 4 != 0)).collect();
    points(&[64, 128, 256], &[256, 1024, 4096], &[1, 2, 4], &options, |_| ALL_BATCHES)
}

/// The CI subset (the interpreter's time bounds it): D ∈ {64, 256} × KV 256 × GQA ∈
/// {1, 4} × options {none, all}; B = 2, 8, 33 at D = 64 and B = 2, 8 at D = 256.
pub fn ci_grid() -> Vec<GridPoint> {
    points(&[64, 256], &[256], &[1, 4], &[(false, false, false), (true, true, true)], |d| if d == 64 { ALL_BATCHES } else { SMALL_BATCHES })
}

/// What one point showed.
#[derive(Clone, Debug, Serialize)]
pub struct GridOutcome {
    /// The point.
    pub point: GridPoint,
    /// Batch sizes whose target output equalled B = 1 bitwise.
    pub invariant_batches: Vec<u32>,
    /// Batch sizes whose target output differed (must be empty).
    pub differing_batches: Vec<u32>,
    /// The largest batch, run twice, gave the same bits for every sequence.
    pub repeatable: bool,
    /// Negative control: the fast mode's batch-dependent chunking changed the target's bits.
    pub fast_mode_differs: bool,
    /// NMSE of the B = 1 output against the float64 reference.
    pub nmse: f64,
    /// max |out − ref| of the B = 1 output.
    pub max_abs: f64,
    /// FNV-1a 64 of the B = 1 output's bits, to compare backends point by point.
    pub output_hash: String,
}

impl GridOutcome {
    /// Every property held (the control is judged over the whole grid).
    pub fn passed(&self) -> bool {
        self.differing_batches.is_empty() && self.repeatable && self.nmse <= 1e-6
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// FNV-1a 64 over the little-endian bits of `v`, hex.
pub fn bits_hash(v: &[f32]) -> String {
    let h =
        v.iter().flat_map(|x| x.to_bits().to_le_bytes()).fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{h:016x}")
}

/// Workgroups the fast mode aims for: about eight per SM of an H100/H200 (132 SMs).
pub const FAST_TARGET_GROUPS: u32 = 1024;

/// A scheduler's fast chunking, as split-KV decoders choose it: enough chunks of the
/// batch's longest sequence that B × Hq × chunks fills the device, 16 … 512 tokens
/// each where the backend's copies are asynchronous (the chunk kernel stages K and
/// takes up to 512 tokens per workgroup), 16 … 256 otherwise. It depends on the batch,
/// which is what the deterministic mode removes.
pub fn fast_chunk(p: &DecodeProblem, async_copies: bool) -> u32 {
    let max_len = p.kv_len.iter().max().copied().unwrap_or(1);
    let chunks = (FAST_TARGET_GROUPS / (p.n_seq() * p.n_heads).max(1)).max(1);
    max_len.div_ceil(chunks).clamp(16, max_fast_chunk(async_copies))
}

/// Workgroups the tensor-core split aims for (one per sequence, KV head and chunk):
/// about one wave of an H100/H200 (132 SMs) holding two of them per SM, so that each
/// streams as long a chunk as the work allows.
pub const TENSOR_CORE_TARGET_GROUPS: u32 = 256;

/// The shortest tensor-core chunk the scheduler picks: two 64-token blocks, so that a
/// workgroup's second block travels while its first is used.
pub const TENSOR_CORE_MIN_CHUNK: u32 = 128;

/// The tensor-core split's chunk: enough chunks of the batch's longest sequence that
/// B × Hkv × chunks reaches [`TENSOR_CORE_TARGET_GROUPS`], in whole 64-token blocks,
/// [`TENSOR_CORE_MIN_CHUNK`] … [`TENSOR_CORE_MAX_CHUNK`] tokens. It depends on the batch,
/// which [`Split::tensor_cores_deterministic`] removes.
pub fn tensor_core_chunk(p: &DecodeProblem) -> u32 {
    let max_len = p.kv_len.iter().max().copied().unwrap_or(1);
    let chunks = (TENSOR_CORE_TARGET_GROUPS / (p.n_seq() * p.n_kv_heads).max(1)).max(1);
    max_len.div_ceil(chunks).next_multiple_of(64).clamp(TENSOR_CORE_MIN_CHUNK, TENSOR_CORE_MAX_CHUNK)
}

/// Runs one point on `dev`.
pub fn run_point(pt: &GridPoint, dev: &mut Device) -> Result<GridOutcome, AttentionError> {
    let hkv = 2;
    let hq = hkv * pt.gqa;
    let seed = ((pt.head_dim as u64) << 40)
        ^ ((pt.kv as u64) << 20)
        ^ ((pt.gqa as u64) << 8)
        ^ ((pt.mask as u64) | (pt.alibi as u64) << 1 | (pt.sinks as u64) << 2);
    let shape = BatchShape {
        head_dim: pt.head_dim,
        n_heads: hq,
        n_kv_heads: hkv,
        k_format: pt.k_format,
        v_format: pt.v_format,
        scale: 1.0 / (pt.head_dim as f32).sqrt(),
        softcap: if pt.sinks { 30.0 } else { 0.0 },
        max_bias: if pt.alibi { 8.0 } else { 0.0 },
        mask: pt.mask,
        sinks: pt.sinks.then(|| (0..hq).map(|h| h as f32 * 0.5 - 1.0).collect()),
        v_head_dim: None,
    };
    let largest = pt.batches.iter().copied().max().unwrap_or(1) as usize;
    // The target, then the other sequences, generated in parallel.
    let specs: Vec<(u64, u32)> = std::iter::once((seed, pt.kv))
        .chain((0..largest - 1).map(|i| {
            let mut r = super::batch::SeqRng::new(seed ^ (0x5eed_0000 + i as u64));
            (seed.wrapping_add(1 + i as u64), 1 + r.below(pt.kv + pt.kv / 2))
        }))
        .collect();
    let mut others = Sequence::random_many(&shape, &specs);
    let target = others.remove(0);
    let head = (hq * pt.head_dim) as usize;
    let alone = pack(&shape, &[&target], 16, None);
    let out1 = alone.run(Split::Deterministic, dev)?;
    let (nmse, max_abs) = compare(&out1, &reference(&alone));
    let (mut invariant_batches, mut differing_batches) = (Vec::new(), Vec::new());
    let mut repeatable = true;
    let mut fast_mode_differs = false;
    for &b in pt.batches {
        // The target sits in the middle of the batch.
        let at = (b as usize - 1) / 2;
        let mut batch: Vec<&Sequence> = others.iter().take(b as usize - 1).collect();
        batch.insert(at, &target);
        let p = pack(&shape, &batch, 16, Some(seed ^ b as u64));
        let out = p.run(Split::Deterministic, dev)?;
        if bits(&out[at * head..][..head]) == bits(&out1) {
            invariant_batches.push(b);
        } else {
            differing_batches.push(b);
        }
        if b as usize == largest {
            repeatable = bits(&p.run(Split::Deterministic, dev)?) == bits(&out);
            let staged = dev.backend().info().async_copies;
            let fast_alone = alone.run(Split::Fast { chunk_tokens: fast_chunk(&alone, staged) }, dev)?;
            let fast_batched = p.run(Split::Fast { chunk_tokens: fast_chunk(&p, staged) }, dev)?;
            fast_mode_differs = bits(&fast_alone) != bits(&fast_batched[at * head..][..head]);
        }
    }
    Ok(GridOutcome { point: *pt, invariant_batches, differing_batches, repeatable, fast_mode_differs, nmse, max_abs, output_hash: bits_hash(&out1) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `batch` sequences of `len` tokens, `n_heads` query heads over 8 KV heads, f16.
    fn shape(batch: usize, len: u32, n_heads: u32) -> DecodeProblem {
        let mut p = crate::attention::problem::tests::lengths(&vec![len; batch], 128, KvFormat::F16);
        p.n_heads = n_heads;
        p
    }

    #[test]
    fn tensor_core_chunks_fill_the_target_in_whole_blocks() {
        // 8 KV heads: 1 × 32768 → 32 chunks of 1024; 16 × 4096 → 2 of 2048.
        assert_eq!(tensor_core_chunk(&shape(1, 32768, 32)), 1024);
        assert_eq!(tensor_core_chunk(&shape(16, 4096, 32)), 2048);
        // Short work: at least two blocks; long batches: one chunk per sequence.
        assert_eq!(tensor_core_chunk(&shape(1, 4096, 32)), 128);
        assert_eq!(tensor_core_chunk(&shape(128, 8192, 32)), 8192);
        // Rounded up to whole blocks (40000 / 32 chunks = 1250 → 1280).
        assert_eq!(tensor_core_chunk(&shape(1, 40000, 64)), 1280);
    }
}
