//! Prefill attention in its exact, deterministic mode: T query tokens per sequence (any
//! T ≥ 1, per sequence: a varlen batch), causal, over the paged or contiguous cache of
//! decode attention, with the bits a decode step gives each query at its position.
//!
//! Query t of sequence b sits at position `kv_len[b] − T_b + t` and attends to tokens
//! `0 …` that position. Each query row is run as one row of a decode batch (a *virtual
//! sequence*: the sequence's pages, its length cut at the query's position, the query's
//! vector, the sequence's mask row) through the deterministic decode kernels
//! (`attn_decode_chunk` or `attn_decode_wide`, then `attn_decode_combine`). Those are
//! batch-invariant (a sequence's bits depend on its own length and values only), so
//! each query's output is, bit for bit, what the decode step at that position gives,
//! whether the tokens arrive in one prefill, in chunks of any size, or one by one
//! (`tests/tests/attention_prefill.rs`). The cost: every query reads its whole prefix,
//! where a tiled prefill kernel reads each K/V tile once per block of queries
//! (docs/RUNTIME.md, "Prefill").

use super::format::KvFormat;
use super::problem::{variant_spec, AttentionError, DecodeProblem, Split};
use crate::Device;
use onekernel_dsl::types::{Literal, StorageType};
use onekernel_runtime::{Args, HostBuffer, Launch};

/// Queries per row tile of `attn_prefill_mma` (four groups of 16 rows); a workgroup
/// holds two tiles that read the same K/V blocks ([`PrefillProblem::pairs_heads`]).
pub const TILED_QUERY_BLOCK: u32 = 64;

/// How `attn_prefill_mma` moves K and V (its `kv64` variant axis).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TiledBlocks {
    /// Blocks of 64 tokens in two buffers filled by asynchronous copies while the other
    /// is used (120.5 KiB of shared memory per workgroup in the manifest, 103 KiB as
    /// CUDA allocates it): backends with asynchronous copies (CUDA from sm_80).
    Kv64,
    /// Blocks of 32 tokens in one buffer (41.25 KiB, within NVIDIA's Vulkan limit of
    /// 48 KiB): backends whose copies are synchronous.
    Kv32,
}

impl TiledBlocks {
    /// The form for a device: [`TiledBlocks::Kv64`] where its copies are asynchronous.
    pub fn for_device(dev: &Device) -> Self {
        if dev.backend().info().async_copies {
            TiledBlocks::Kv64
        } else {
            TiledBlocks::Kv32
        }
    }
}

/// Where the rows of a `[tokens][heads][D]` tensor lie in its buffer, in elements: row
/// (token i, head h) starts at `i · token_stride + h · head_stride`. Explicit, so that a
/// caller's padded or interleaved layout is read as it is (a wrong token stride was the
/// seed's prefill bug, visible only with T > 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowLayout {
    /// Elements from one token's rows to the next's.
    pub token_stride: usize,
    /// Elements from one head's row to the next's.
    pub head_stride: usize,
}

impl RowLayout {
    /// The dense layout `[tokens][heads][dim]`.
    pub fn dense(heads: u32, dim: u32) -> Self {
        RowLayout { token_stride: (heads * dim) as usize, head_stride: dim as usize }
    }

    /// Elements a buffer of `tokens` tokens of `heads` rows of `dim` needs (saturating at
    /// `usize::MAX` for strides no buffer can have).
    pub fn len(&self, tokens: usize, heads: u32, dim: u32) -> usize {
        if tokens == 0 || heads == 0 {
            0
        } else {
            (tokens - 1)
                .saturating_mul(self.token_stride)
                .saturating_add((heads as usize - 1).saturating_mul(self.head_stride))
                .saturating_add(dim as usize)
        }
    }

    /// Whether rows of `dim` elements of `heads` heads overlap in this layout.
    fn overlaps(&self, heads: u32, dim: u32) -> bool {
        let (h, d) = (heads as usize, dim as usize);
        let row_span = h.saturating_sub(1).saturating_mul(self.head_stride).saturating_add(d);
        (h > 1 && self.head_stride < d) || self.token_stride < row_span
    }
}

/// A prefill step: `q_tokens[b]` new query tokens for each sequence b, whose K/V rows are
/// already in the cache (`kv_len[b]` tokens in all, the new ones last).
#[derive(Clone, Debug)]
pub struct PrefillProblem {
    /// K row elements D.
    pub head_dim: u32,
    /// Query heads Hq (a multiple of `n_kv_heads`).
    pub n_heads: u32,
    /// KV heads Hkv.
    pub n_kv_heads: u32,
    /// Tokens per page P.
    pub page_size: u32,
    /// Entries per sequence in the block table (and the contiguous layout's pages).
    pub pages_per_seq: u32,
    /// Tokens of each sequence in the cache, the new ones included; its length is B.
    pub kv_len: Vec<u32>,
    /// New query tokens of each sequence, `1 ≤ T_b ≤ kv_len[b]`: sequence b's queries are
    /// tokens `offset_b … offset_b + T_b − 1` of `q` and of the output, `offset_b` the sum
    /// of the earlier sequences' counts (a varlen batch's cumulative offsets).
    pub q_tokens: Vec<u32>,
    /// K format.
    pub k_format: KvFormat,
    /// V format.
    pub v_format: KvFormat,
    /// K cache image (`[n_pages][page_size][n_kv_heads]` rows).
    pub k: Vec<u8>,
    /// V cache image.
    pub v: Vec<u8>,
    /// `[B][pages_per_seq]` physical pages, −1 unused; `None`: sequence b owns pages
    /// `b·pages_per_seq …`.
    pub block_table: Option<Vec<i32>>,
    /// Queries: Σ T_b tokens of Hq rows of D in `q_layout`.
    pub q: Vec<f32>,
    /// Where `q`'s rows lie.
    pub q_layout: RowLayout,
    /// Where the output's rows are written ([`PrefillProblem::run`]).
    pub out_layout: RowLayout,
    /// Multiplies q·k.
    pub scale: f32,
    /// Logit softcap (0 = off).
    pub softcap: f32,
    /// ALiBi `max_bias` (0 = off).
    pub max_bias: f32,
    /// `[B][pages_per_seq·P]` additive mask (f16 values), added for every query of the
    /// sequence (with the causal limit).
    pub mask: Option<Vec<f32>>,
    /// `[Hq]` sink logits.
    pub sinks: Option<Vec<f32>>,
    /// V row elements where they differ from `head_dim` (MLA).
    pub v_head_dim: Option<u32>,
}

impl PrefillProblem {
    /// Σ T_b: query tokens of the step.
    pub fn n_queries(&self) -> usize {
        self.q_tokens.iter().map(|&t| t as usize).sum()
    }

    /// Elements of a V row (and of an output row).
    pub fn v_dim(&self) -> u32 {
        self.v_head_dim.unwrap_or(self.head_dim)
    }

    /// The position of each query token, in order: `kv_len[b] − T_b + t` (a sequence with
    /// more queries than tokens, which `check` rejects, gives positions from 0).
    pub fn positions(&self) -> Vec<u32> {
        self.kv_len.iter().zip(&self.q_tokens).flat_map(|(&l, &t)| (l.saturating_sub(t)..l).collect::<Vec<_>>()).collect()
    }

    /// Rejects a malformed step before anything is launched (the decode checks then
    /// apply to the virtual batch: formats, images, pages, mask, sinks).
    pub fn check(&self) -> Result<(), AttentionError> {
        let bad = |m: String| Err(AttentionError::Invalid(format!("prefill: {m}")));
        let b = self.kv_len.len();
        if b == 0 || self.q_tokens.len() != b {
            return bad(format!("{} query counts for {b} sequences", self.q_tokens.len()));
        }
        if let Some((s, (&t, &l))) = self.q_tokens.iter().zip(&self.kv_len).enumerate().find(|(_, (&t, &l))| t == 0 || t > l) {
            return bad(format!("sequence {s}: {t} query tokens with {l} tokens in the cache (1 … kv_len)"));
        }
        if self.n_heads == 0 || self.head_dim == 0 || self.v_dim() == 0 {
            return bad("shapes must be positive".into());
        }
        for (what, layout, dim) in [("q", self.q_layout, self.head_dim), ("output", self.out_layout, self.v_dim())] {
            if layout.overlaps(self.n_heads, dim) {
                return bad(format!(
                    "{what} layout (token stride {}, head stride {}) overlaps rows of {dim} elements for {} heads",
                    layout.token_stride, layout.head_stride, self.n_heads
                ));
            }
        }
        let need = self.q_layout.len(self.n_queries(), self.n_heads, self.head_dim);
        if self.q.len() < need {
            return bad(format!("q holds {} values; {} tokens in its layout need {need}", self.q.len(), self.n_queries()));
        }
        Ok(())
    }

    /// Rejects a step whose cache, table, mask or sinks the decode checks reject, checked
    /// per sequence (not per query) and without copying the cache images.
    pub fn check_cache(&self) -> Result<(), AttentionError> {
        self.check()?;
        let view = DecodeProblem {
            head_dim: self.head_dim,
            n_heads: self.n_heads,
            n_kv_heads: self.n_kv_heads,
            page_size: self.page_size,
            pages_per_seq: self.pages_per_seq,
            kv_len: self.kv_len.clone(),
            k_format: self.k_format,
            v_format: self.v_format,
            k: Vec::new(),
            v: Vec::new(),
            block_table: self.block_table.clone(),
            q: vec![0.0; self.kv_len.len() * (self.n_heads * self.head_dim) as usize],
            scale: self.scale,
            softcap: self.softcap,
            max_bias: self.max_bias,
            mask: self.mask.clone(),
            sinks: self.sinks.clone(),
            v_head_dim: self.v_head_dim,
        };
        view.check_with_images(self.k.len(), self.v.len()).map_err(|e| match e {
            AttentionError::Invalid(m) => AttentionError::Invalid(format!("prefill: {m}")),
            other => other,
        })
    }

    /// Pages the cache images hold.
    pub fn n_pages(&self) -> usize {
        self.k.len() / (self.k_format.row_bytes(self.head_dim as usize) * (self.page_size * self.n_kv_heads) as usize).max(1)
    }

    /// The decode batch of one virtual sequence per query token (see the module docs):
    /// always paged (the contiguous layout's pages written out as a table), the cache
    /// images shared.
    pub fn as_decode(&self) -> Result<DecodeProblem, AttentionError> {
        self.check()?;
        let (pps, hq, d) = (self.pages_per_seq as usize, self.n_heads as usize, self.head_dim as usize);
        let (mut kv_len, mut table, mut q, mut mask) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let row_len = pps * self.page_size as usize;
        let mut token = 0usize;
        for (s, (&l, &t)) in self.kv_len.iter().zip(&self.q_tokens).enumerate() {
            let pages: Vec<i32> = match &self.block_table {
                Some(tab) => tab.get(s * pps..(s + 1) * pps).map(<[i32]>::to_vec).unwrap_or_default(),
                None => (s * pps..(s + 1) * pps).map(|p| p as i32).collect(),
            };
            for i in 0..t {
                kv_len.push(l - t + i + 1);
                table.extend(&pages);
                for h in 0..hq {
                    let at = token * self.q_layout.token_stride + h * self.q_layout.head_stride;
                    q.extend(&self.q[at..at + d]);
                }
                if let Some(m) = &self.mask {
                    mask.extend(m.get(s * row_len..(s + 1) * row_len).unwrap_or_default());
                }
                token += 1;
            }
        }
        Ok(DecodeProblem {
            head_dim: self.head_dim,
            n_heads: self.n_heads,
            n_kv_heads: self.n_kv_heads,
            page_size: self.page_size,
            pages_per_seq: self.pages_per_seq,
            kv_len,
            k_format: self.k_format,
            v_format: self.v_format,
            k: self.k.clone(),
            v: self.v.clone(),
            block_table: Some(table),
            q,
            scale: self.scale,
            softcap: self.softcap,
            max_bias: self.max_bias,
            mask: self.mask.as_ref().map(|_| mask),
            sinks: self.sinks.clone(),
            v_head_dim: self.v_head_dim,
        })
    }

    /// Runs the step with `split`: [`Split::Deterministic`] (or another deterministic
    /// split) gives every query the bits of the decode step at its position;
    /// [`Split::Fast`] the fast decode kernels' chunks (within tolerance, other bits).
    /// Returns the output in `out_layout` (`out_layout.len(Σ T_b, Hq, Dv)` elements,
    /// zeros between rows).
    pub fn run(&self, split: Split, dev: &mut Device) -> Result<Vec<f32>, AttentionError> {
        if matches!(split, Split::TensorCores { .. }) {
            return Err(AttentionError::Invalid("prefill: the tensor-core split is decode's; prefill runs the exact decode kernels".into()));
        }
        let decode = self.as_decode()?;
        decode.check().map_err(|e| match e {
            AttentionError::Invalid(m) => AttentionError::Invalid(format!("prefill: {m}")),
            other => other,
        })?;
        let rows = decode.run(split, dev)?;
        Ok(self.scatter(&rows))
    }

    /// Rejects a step `attn_prefill_mma` cannot run ([`PrefillProblem::run_tensor_cores`]),
    /// naming what it lacks; the exact mode ([`PrefillProblem::run`]) takes every step.
    pub fn check_tensor_cores(&self) -> Result<(), AttentionError> {
        self.check()?;
        let why = if self.k_format != KvFormat::F16 || self.v_format != KvFormat::F16 {
            format!("{} K and {} V (it reads f16 only)", self.k_format.name(), self.v_format.name())
        } else if self.head_dim != 128 || self.v_dim() != 128 {
            format!("K rows of {} and V rows of {} (it takes D = 128)", self.head_dim, self.v_dim())
        } else if self.n_kv_heads == 0 || !self.n_heads.is_multiple_of(self.n_kv_heads) {
            format!("Hq = {} over Hkv = {}", self.n_heads, self.n_kv_heads)
        } else if self.softcap != 0.0 || self.max_bias != 0.0 {
            "softcap or ALiBi (the exact mode's options)".to_string()
        } else if let Some((what, l)) =
            [("q", self.q_layout), ("output", self.out_layout)].into_iter().find(|(_, l)| l.token_stride % 2 != 0 || l.head_stride % 2 != 0)
        {
            // Its Q values and outputs move in pairs, one 8-byte access each.
            format!(
                "an odd stride in the {what} layout (token stride {}, head stride {}: it moves pairs of values, 8 bytes at a time)",
                l.token_stride, l.head_stride
            )
        } else if !(self.scale > 0.0 && self.scale.is_finite()) {
            // Each row's maximum is taken over the unscaled scores.
            format!("scale {} (it takes a positive, finite scale)", self.scale)
        } else if [self.q.len(), self.out_layout.len(self.n_queries(), self.n_heads, self.v_dim())].iter().any(|&n| n > u32::MAX as usize) {
            "queries or outputs past 2^32 elements".to_string()
        } else {
            return Ok(());
        };
        Err(AttentionError::Invalid(format!("prefill on tensor cores (`attn_prefill_mma`) cannot take {why}")))
    }

    /// Runs the step in the fast mode: `attn_prefill_mma` (class `fast`; within a
    /// tolerance of the reference, not bitwise any decode step) with K/V blocks as
    /// `blocks` says ([`TiledBlocks::for_device`] picks the device's). Returns the output
    /// in `out_layout`, as [`PrefillProblem::run`] does.
    pub fn run_tensor_cores(&self, blocks: TiledBlocks, dev: &mut Device) -> Result<Vec<f32>, AttentionError> {
        self.check_tensor_cores()?;
        self.check_cache()?;
        let name = "attn_prefill_mma";
        let kernel = dev.kernel(name).ok_or_else(|| AttentionError::Manifest(format!("`{name}` is not in the manifest")))?;
        let axes = [("paged", Literal::Bool(self.block_table.is_some())), ("kv64", Literal::Bool(blocks == TiledBlocks::Kv64))];
        // The page size is a spec constant: one compiled instance per page size.
        let spec = variant_spec(kernel, &axes, &[("page_size", self.page_size)])?;
        let starts: Vec<u32> = self.q_tokens.iter().scan(0u32, |acc, &t| Some(std::mem::replace(acc, *acc + t))).collect();
        let out_len = self.out_layout.len(self.n_queries(), self.n_heads, self.v_dim());
        let (ql, ol) = (self.q_layout, self.out_layout);
        let mut args = Args::new()
            .buffer("q", HostBuffer::from_f32(&self.q))
            .buffer("k", HostBuffer::u32_image(&self.k))
            .buffer("v", HostBuffer::u32_image(&self.v))
            .buffer("block_table", HostBuffer::from_i32(self.block_table.as_deref().unwrap_or(&[0])))
            .buffer("kv_len", HostBuffer::from_u32(&self.kv_len))
            .buffer("q_tokens", HostBuffer::from_u32(&self.q_tokens))
            .buffer("q_start", HostBuffer::from_u32(&starts))
            .buffer("mask", HostBuffer::f16_from_f32(self.mask.as_deref().unwrap_or(&[0.0])))
            .buffer("sinks", HostBuffer::from_f32(self.sinks.as_deref().unwrap_or(&[0.0])))
            .buffer("out", HostBuffer::zeros(StorageType::F32, out_len.max(1)))
            .scalar("n_heads", self.n_heads)
            .scalar("n_kv_heads", self.n_kv_heads)
            .scalar("pages_per_seq", self.pages_per_seq)
            .scalar("q_token_stride", ql.token_stride as u32)
            .scalar("q_head_stride", ql.head_stride as u32)
            .scalar("out_token_stride", ol.token_stride as u32)
            .scalar("out_head_stride", ol.head_stride as u32)
            .scalar("q_len", self.q.len() as u32)
            .scalar("out_len", out_len as u32)
            .scalar("scale", self.scale)
            .scalar("has_mask", self.mask.is_some() as u32)
            .scalar("has_sinks", self.sinks.is_some() as u32)
            .scalar("pair_heads", self.pairs_heads() as u32);
        let query_blocks = self.q_tokens.iter().map(|t| t.div_ceil(TILED_QUERY_BLOCK)).max().unwrap_or(1);
        // Heads fastest: each sequence's blocks start heaviest first across its heads.
        let groups = if self.pairs_heads() {
            [self.n_heads / 2, query_blocks, self.kv_len.len() as u32]
        } else {
            [self.n_heads, query_blocks.div_ceil(2), self.kv_len.len() as u32]
        };
        let launch = Launch { kernel, artifacts: dev.artifacts(), spec: &spec, groups };
        dev.execute(&[launch], std::slice::from_mut(&mut args))?;
        let mut out = args.get_buffer("out").map(|o| o.to_f32()).unwrap_or_default();
        out.truncate(out_len);
        Ok(out)
    }

    /// How `attn_prefill_mma` pairs its row tiles: two query heads of one KV head at the
    /// same query block where each KV head has an even number of query heads, so that
    /// the tiles read the same tokens; else two consecutive query blocks of one head
    /// (the later tile reads up to 64 tokens more, which the earlier one masks).
    pub fn pairs_heads(&self) -> bool {
        self.n_kv_heads > 0 && (self.n_heads / self.n_kv_heads).is_multiple_of(2)
    }

    /// Places `[Σ T_b][Hq][Dv]` dense rows in `out_layout`.
    pub fn scatter<T: Copy + Default>(&self, rows: &[T]) -> Vec<T> {
        let (hq, dv) = (self.n_heads as usize, self.v_dim() as usize);
        let mut out = vec![T::default(); self.out_layout.len(self.n_queries(), self.n_heads, self.v_dim())];
        for (i, r) in rows.chunks(hq * dv).enumerate() {
            for (h, row) in r.chunks(dv).enumerate() {
                let at = i * self.out_layout.token_stride + h * self.out_layout.head_stride;
                out[at..at + dv].copy_from_slice(row);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(kv_len: Vec<u32>, q_tokens: Vec<u32>) -> PrefillProblem {
        let n: u32 = q_tokens.iter().sum();
        PrefillProblem {
            head_dim: 4,
            n_heads: 2,
            n_kv_heads: 1,
            page_size: 4,
            pages_per_seq: 3,
            kv_len,
            q_tokens,
            k_format: KvFormat::F32,
            v_format: KvFormat::F32,
            k: vec![0; 4 * 4 * 6 * 4],
            v: vec![0; 4 * 4 * 6 * 4],
            block_table: None,
            q: (0..n * 8).map(|x| x as f32).collect(),
            q_layout: RowLayout::dense(2, 4),
            out_layout: RowLayout::dense(2, 4),
            scale: 1.0,
            softcap: 0.0,
            max_bias: 0.0,
            mask: None,
            sinks: None,
            v_head_dim: None,
        }
    }

    #[test]
    fn row_tiles_pair_heads_only_where_each_kv_head_has_an_even_group() {
        let mut p = step(vec![10], vec![3]);
        for (hq, hkv, pairs) in [(2, 1, true), (32, 8, true), (8, 4, true), (3, 3, false), (6, 2, false), (1, 1, false)] {
            (p.n_heads, p.n_kv_heads) = (hq, hkv);
            assert_eq!(p.pairs_heads(), pairs, "Hq {hq}, Hkv {hkv}");
        }
    }

    #[test]
    fn each_query_is_a_virtual_sequence_cut_at_its_position() {
        let p = step(vec![10, 3], vec![3, 2]);
        assert_eq!(p.positions(), vec![7, 8, 9, 1, 2]);
        let d = p.as_decode().unwrap();
        assert_eq!(d.kv_len, vec![8, 9, 10, 2, 3]);
        // Contiguous sequences become explicit table rows: sequence 1 owns pages 3, 4, 5.
        assert_eq!(&d.block_table.as_ref().unwrap()[9..15], &[3, 4, 5, 3, 4, 5]);
        assert_eq!(&d.q[..8], &p.q[..8]);
    }

    #[test]
    fn strided_queries_are_gathered_by_their_strides() {
        let mut p = step(vec![5], vec![2]);
        // Token stride 11, head stride 5: rows at 0, 5, 11, 16.
        p.q_layout = RowLayout { token_stride: 11, head_stride: 5 };
        p.q = (0..20).map(|x| x as f32).collect();
        let d = p.as_decode().unwrap();
        assert_eq!(d.q, [0., 1., 2., 3., 5., 6., 7., 8., 11., 12., 13., 14., 16., 17., 18., 19.]);
        p.out_layout = p.q_layout;
        let out = p.scatter(&[1.0f32; 16]);
        assert_eq!(out.len(), 20);
        assert_eq!(out[4], 0.0);
        assert_eq!(out[16..20], [1.0; 4]);
    }

    #[test]
    fn malformed_steps_are_rejected() {
        let msg = |p: &PrefillProblem| match p.check() {
            Err(AttentionError::Invalid(m)) => m,
            other => panic!("{other:?}"),
        };
        assert!(msg(&step(vec![3], vec![4])).contains("4 query tokens with 3 tokens"));
        assert!(msg(&step(vec![3], vec![0])).contains("0 query tokens"));
        let mut p = step(vec![5], vec![2]);
        p.q.truncate(15);
        assert!(msg(&p).contains("q holds 15 values"));
        p.q_layout = RowLayout { token_stride: 6, head_stride: 4 };
        assert!(msg(&p).contains("overlaps"));
        // Strides no buffer can have: an error, not an overflow.
        p.q_layout = RowLayout { token_stride: usize::MAX, head_stride: usize::MAX / 2 };
        assert!(msg(&p).contains("q holds"), "{}", msg(&p));
        assert_eq!(RowLayout::dense(0, 4).len(3, 0, 4), 0);
    }

    #[test]
    fn the_cache_is_checked_per_sequence_without_the_virtual_batch() {
        let mut p = step(vec![10, 3], vec![3, 2]);
        assert!(p.check_cache().is_ok());
        assert_eq!(p.n_pages(), 6);
        // A table entry past the cache's pages, one image short of a page, a short mask.
        p.block_table = Some(vec![0, 1, 9, 3, 4, 5]);
        let msg = p.check_cache().unwrap_err().to_string();
        assert!(msg.contains("prefill: block_table[0][2] = 9"), "{msg}");
        p.block_table = None;
        p.k.truncate(p.k.len() - 4);
        assert!(p.check_cache().unwrap_err().to_string().contains("not a whole number"));
        let mut p = step(vec![10, 3], vec![3, 2]);
        p.mask = Some(vec![0.0; 5]);
        assert!(p.check_cache().unwrap_err().to_string().contains("the mask holds 5 values"));
    }
}
