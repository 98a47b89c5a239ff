//! The KV-quant kernels as calls: cache images in, scores / rows / outputs out, on any
//! backend. Each call checks its inputs before launch (whole blocks, matching counts,
//! GQA divisibility) and fills the format tables from [`super::constants`].

use super::constants as C;
use crate::Device;
use onekernel_dsl::types::{Literal, StorageType};
use onekernel_runtime::{Args, HostBuffer};

/// Why a KV-quant call could not run.
pub type KvQuantError = crate::CallError;

/// A turbo layout of [`Device::turbo_scores`] (the kernel's `format` variant).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TurboFormat {
    /// Legacy `block_turbo3_0` × 4 (56 B, rotated domain).
    Turbo3,
    /// `block_tbq3_0` × 4 (56 B).
    Tbq3,
    /// Legacy 66-byte `block_turbo4_0` (rotated domain).
    Turbo4Legacy,
    /// `block_tbq4_0` × 4 (72 B).
    Tbq4,
    /// `turbo3_tcq` (52 B, rotated domain).
    Tcq,
}

impl TurboFormat {
    /// Bytes per 128-element row.
    pub fn row_bytes(self) -> usize {
        [56, 56, 66, 72, 52][self as usize]
    }

    fn levels(self) -> &'static [f32] {
        match self {
            TurboFormat::Turbo3 => &C::TURBO3_CENTROIDS,
            TurboFormat::Tbq3 => &C::TBQ3_CODEBOOK,
            TurboFormat::Turbo4Legacy => &C::TURBO4_LEGACY_LEVELS,
            TurboFormat::Tbq4 => &C::TBQ4_CODEBOOK,
            TurboFormat::Tcq => &C::TCQ_CODEBOOK,
        }
    }

    /// Whether the real-domain score exists for this layout (TBQ only).
    pub fn has_real_domain(self) -> bool {
        matches!(self, TurboFormat::Tbq3 | TurboFormat::Tbq4)
    }
}

fn check(kernel: &'static str, argument: &'static str, ok: bool, message: impl FnOnce() -> String) -> Result<(), KvQuantError> {
    crate::call::require(kernel, argument, ok, message)
}

/// Rows per tile of `turbo_score` and `polar_score`.
const SCORE_TILE_ROWS: u32 = 64;
/// Keys per tile of `qjl_score`.
const QJL_TILE_KEYS: u32 = 128;
/// Workgroups `turbo_score` and `polar_score` launches aim at: a few per SM on current
/// GPUs, so each takes several tiles and overlaps one tile's loads with the previous
/// tile's arithmetic. 512 (one wave at four groups per SM on 132 SMs) measured within
/// ±2 % on CUDA but 10 % slower for TBQ4 on NVIDIA Vulkan (docs/KVQUANT.md).
const SCORE_TARGET_GROUPS: u32 = 1024;
/// Workgroups `qjl_score` launches aim at: one wave at four groups per SM on 132 SMs;
/// against 1024, +6 % on CUDA and +11 % on NVIDIA Vulkan at L = 65536 (docs/KVQUANT.md).
const QJL_TARGET_GROUPS: u32 = 512;

/// `(tiles_per_group, groups along x)` for `n_tokens` rows in tiles of `tile` rows per
/// KV head, about `target` workgroups in all.
fn score_tiling(n_tokens: u32, tile: u32, n_kv_heads: u32, target: u32) -> (u32, u32) {
    let tiles = n_tokens.div_ceil(tile);
    let per = (tiles * n_kv_heads).div_ceil(target).max(1);
    (per, tiles.div_ceil(per))
}

/// Query heads must be a whole multiple of the KV heads (GQA).
fn check_heads(kernel: &'static str, n_heads: u32, n_kv_heads: u32) -> Result<(), KvQuantError> {
    check(kernel, "n_heads", n_heads > 0 && n_kv_heads > 0 && n_heads.is_multiple_of(n_kv_heads), || {
        format!("n_heads {n_heads} is not a multiple of n_kv_heads {n_kv_heads}")
    })
}

impl Device<'_> {
    /// Launches `kernel` (its only variant) and returns the raw bytes of buffer `out`.
    fn run_bytes(&mut self, kernel: &'static str, args: Args, groups: [u32; 3], out: &str) -> Result<Vec<u8>, KvQuantError> {
        self.run_variant(kernel, &[], args, groups, out)
    }

    /// Launches the variant of `kernel` whose spec constants include `axes` and returns
    /// the raw bytes of buffer `out`.
    fn run_variant(
        &mut self,
        kernel: &'static str,
        axes: &[(&str, Literal)],
        mut args: Args,
        groups: [u32; 3],
        out: &str,
    ) -> Result<Vec<u8>, KvQuantError> {
        self.launch_variant(kernel, axes, &mut args, groups)?;
        Ok(args.get_buffer(out).map(|b| b.as_bytes().to_vec()).unwrap_or_default())
    }

    /// TBQ3 (`bits = 3`, 56 bytes per row) or TBQ4 (`bits = 4`, 72 bytes) rows of `x`
    /// (whole 128-element rows), encoded on the device.
    pub fn tbq_quantize(&mut self, x: &[f32], bits: u32) -> Result<Vec<u8>, KvQuantError> {
        const K: &str = "tbq_quantize";
        check(K, "bits", bits == 3 || bits == 4, || format!("TBQ has 3 or 4 bits, not {bits}"))?;
        check(K, "x", !x.is_empty() && x.len().is_multiple_of(128), || format!("{} values: not a whole number of 128-element rows", x.len()))?;
        let n = (x.len() / 32) as u32;
        let (levels, mids): (&[f32], &[f32]) = if bits == 3 { (&C::TBQ3_CODEBOOK, &[0.0]) } else { (&C::TBQ4_CODEBOOK, &C::TBQ4_MIDPOINTS) };
        let args = Args::new()
            .buffer("x", HostBuffer::from_f32(x))
            .buffer("signs", HostBuffer::from_f32(&C::TBQ_SIGNS))
            .buffer("levels", HostBuffer::from_f32(levels))
            .buffer("mids", HostBuffer::from_f32(mids))
            .buffer("out", HostBuffer::zeros(StorageType::U8, n as usize * if bits == 3 { 14 } else { 18 }))
            .scalar("n_blocks", n)
            .scalar("bits", bits);
        self.run_bytes(K, args, [n.div_ceil(64), 1, 1], "out")
    }

    /// `block_qjl1_256` of each 128-element key, encoded on the device with `prj`.
    pub fn qjl_quantize(&mut self, keys: &[f32], prj: &[f32]) -> Result<Vec<u8>, KvQuantError> {
        const K: &str = "qjl_quantize";
        check(K, "keys", !keys.is_empty() && keys.len().is_multiple_of(128), || {
            format!("{} values: not a whole number of 128-element keys", keys.len())
        })?;
        check(K, "prj", prj.len() == 128 * 256, || "the projection must hold 128 × 256 values".into())?;
        let n = (keys.len() / 128) as u32;
        let args = Args::new()
            .buffer("keys", HostBuffer::from_f32(keys))
            .buffer("prj", HostBuffer::from_f32(prj))
            .buffer("out", HostBuffer::zeros(StorageType::U8, n as usize * 34));
        self.run_bytes(K, args, [n, 1, 1], "out")
    }

    /// [`Self::run_bytes`] for an f32 output.
    fn run(&mut self, kernel: &'static str, args: Args, groups: [u32; 3], out: &str) -> Result<Vec<f32>, KvQuantError> {
        self.run_variant_f32(kernel, &[], args, groups, out)
    }

    /// [`Self::run_variant`] for an f32 output.
    fn run_variant_f32(
        &mut self,
        kernel: &'static str,
        axes: &[(&str, Literal)],
        args: Args,
        groups: [u32; 3],
        out: &str,
    ) -> Result<Vec<f32>, KvQuantError> {
        let bytes = self.run_variant(kernel, axes, args, groups, out)?;
        Ok(bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// `[n_heads][n_tokens]` scores of the 128-element query heads `q` (`[n_heads][128]`)
    /// against rows in `format` laid out `[n_kv_heads][n_tokens]`; head `h` reads KV head
    /// `h / (n_heads / n_kv_heads)`, so `n_kv_heads = 1` scores every query against all
    /// rows. `real_domain` (TBQ only) scores against the unconditioned values.
    pub fn turbo_scores(
        &mut self,
        format: TurboFormat,
        real_domain: bool,
        q: &[f32],
        rows: &[u8],
        n_kv_heads: u32,
    ) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "turbo_score";
        let rb = format.row_bytes();
        check(K, "q", !q.is_empty() && q.len().is_multiple_of(128), || format!("{} query values: not a whole number of 128-element rows", q.len()))?;
        let n_heads = (q.len() / 128) as u32;
        check_heads(K, n_heads, n_kv_heads)?;
        let per_token = rb * n_kv_heads as usize;
        check(K, "rows", !rows.is_empty() && rows.len().is_multiple_of(per_token), || {
            format!("{} bytes: not whole {rb}-byte {format:?} rows for {n_kv_heads} KV heads", rows.len())
        })?;
        check(K, "real_domain", !real_domain || format.has_real_domain(), || {
            format!("{format:?} has no real-domain score (it is scored in the rotated domain)")
        })?;
        let n = (rows.len() / per_token) as u32;
        let args = Args::new()
            .buffer("q", HostBuffer::from_f32(q))
            .buffer("k", HostBuffer::u32_image(rows))
            .buffer("levels", HostBuffer::from_f32(format.levels()))
            .buffer("signs", HostBuffer::from_f32(&C::TBQ_SIGNS))
            .buffer("scores", HostBuffer::zeros(StorageType::F32, (n_heads * n) as usize))
            .scalar("n_heads", n_heads)
            .scalar("n_kv_heads", n_kv_heads)
            .scalar("n_tokens", n)
            .scalar("real_domain", real_domain as u32);
        let (per, groups) = score_tiling(n, SCORE_TILE_ROWS, n_kv_heads, SCORE_TARGET_GROUPS);
        self.run_variant_f32(K, &[("format", Literal::U32(format as u32))], args.scalar("tiles_per_group", per), [groups, n_kv_heads, 1], "scores")
    }

    /// `[n_heads][n_tokens]` QJL scores. `q` is the sketch `[n_heads][256]`, or with
    /// `prj` (the 128 × 256 projection) the raw query `[n_heads][128]` (mul_mv). Keys
    /// are `[n_kv_heads][n_tokens]` blocks of 34 bytes.
    pub fn qjl_scores(&mut self, q: &[f32], prj: Option<&[f32]>, keys: &[u8], n_heads: u32, n_kv_heads: u32) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "qjl_score";
        let qdim = if prj.is_some() { 128 } else { 256 };
        check_heads(K, n_heads, n_kv_heads)?;
        check(K, "q", q.len() == (n_heads * qdim) as usize, || format!("{} query values, n_heads × {qdim} = {}", q.len(), n_heads * qdim))?;
        check(K, "prj", prj.is_none_or(|p| p.len() == 128 * 256), || "the projection must hold 128 × 256 values".into())?;
        let per_head = 34 * n_kv_heads as usize;
        check(K, "keys", !keys.is_empty() && keys.len().is_multiple_of(per_head), || {
            format!("{} key bytes: not whole 34-byte blocks for {n_kv_heads} KV heads", keys.len())
        })?;
        let n = (keys.len() / per_head) as u32;
        let args = Args::new()
            .buffer("q", HostBuffer::from_f32(q))
            .buffer("k", HostBuffer::u32_image(keys))
            .buffer("prj", HostBuffer::from_f32(prj.unwrap_or(&[0.0])))
            .buffer("scores", HostBuffer::zeros(StorageType::F32, (n_heads * n) as usize))
            .scalar("n_heads", n_heads)
            .scalar("n_kv_heads", n_kv_heads)
            .scalar("n_tokens", n)
            .scalar("project", prj.is_some() as u32);
        let (per, groups) = score_tiling(n, QJL_TILE_KEYS, n_kv_heads, QJL_TARGET_GROUPS);
        // One query head per KV head needs one nibble table: the variant without
        // `four_heads` takes 13 KiB less shared memory (docs/KVQUANT.md).
        let axes = [("four_heads", Literal::Bool(n_heads > n_kv_heads))];
        self.run_variant_f32(K, &axes, args.scalar("tiles_per_group", per), [groups, n_kv_heads, 1], "scores")
    }

    /// Dequantized QJL keys, `[n][128]`.
    pub fn qjl_rows(&mut self, keys: &[u8], prj: &[f32]) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "qjl_get_rows";
        check(K, "keys", !keys.is_empty() && keys.len().is_multiple_of(34), || format!("{} bytes: not whole 34-byte blocks", keys.len()))?;
        check(K, "prj", prj.len() == 128 * 256, || "the projection must hold 128 × 256 values".into())?;
        let n = (keys.len() / 34) as u32;
        let args = Args::new()
            .buffer("k", HostBuffer::u32_image(keys))
            .buffer("prj", HostBuffer::from_f32(prj))
            .buffer("rows", HostBuffer::zeros(StorageType::F32, n as usize * 128));
        self.run(K, args, [n, 1, 1], "rows")
    }

    /// `[n_heads][n_tokens]` Polar scores `⟨x̂, q_h⟩` of the query heads `q`
    /// (`[n_heads][128]`) against blocks laid out `[n_kv_heads][n_tokens]` (head `h` reads
    /// KV head `h / (n_heads / n_kv_heads)`); with `preht` the queries are `H128u(q)`.
    pub fn polar_scores(&mut self, q: &[f32], rows: &[u8], n_kv_heads: u32, use_qjl: bool, preht: bool) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "polar_score";
        check(K, "q", !q.is_empty() && q.len().is_multiple_of(128), || format!("{} query values: not a whole number of 128-element rows", q.len()))?;
        let n_heads = (q.len() / 128) as u32;
        check_heads(K, n_heads, n_kv_heads)?;
        let per_token = 82 * n_kv_heads as usize;
        check(K, "rows", !rows.is_empty() && rows.len().is_multiple_of(per_token), || {
            format!("{} bytes: not whole 82-byte blocks for {n_kv_heads} KV heads", rows.len())
        })?;
        let n = (rows.len() / per_token) as u32;
        let args = Args::new()
            .buffer("q", HostBuffer::from_f32(q))
            .buffer("k", HostBuffer::u32_image(rows))
            .buffer("centroids", HostBuffer::from_f32(&C::POLAR_CENTROIDS))
            .buffer("psi", HostBuffer::from_f32(&C::POLAR_PSI))
            .buffer("scores", HostBuffer::zeros(StorageType::F32, (n_heads * n) as usize))
            .scalar("n_heads", n_heads)
            .scalar("n_kv_heads", n_kv_heads)
            .scalar("n_tokens", n)
            .scalar("use_qjl", use_qjl as u32)
            .scalar("preht", preht as u32);
        let (per, groups) = score_tiling(n, SCORE_TILE_ROWS, n_kv_heads, SCORE_TARGET_GROUPS);
        self.run(K, args.scalar("tiles_per_group", per), [groups, n_kv_heads, 1], "scores")
    }

    /// Dequantized Polar rows, `[n][128]`.
    pub fn polar_rows(&mut self, rows: &[u8], use_qjl: bool) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "polar_get_rows";
        check(K, "rows", !rows.is_empty() && rows.len().is_multiple_of(82), || format!("{} bytes: not whole 82-byte blocks", rows.len()))?;
        let n = (rows.len() / 82) as u32;
        let args = Args::new()
            .buffer("k", HostBuffer::u32_image(rows))
            .buffer("centroids", HostBuffer::from_f32(&C::POLAR_CENTROIDS))
            .buffer("psi", HostBuffer::from_f32(&C::POLAR_PSI))
            .buffer("rows", HostBuffer::zeros(StorageType::F32, n as usize * 128))
            .scalar("use_qjl", use_qjl as u32);
        self.run(K, args, [n, 1, 1], "rows")
    }

    /// Fused QJL-K attention, `[n_heads][128]` out. `values` are TBQ3 (56 B per token)
    /// or, with `polar = Some(use_qjl)`, Polar blocks (82 B); both `[n_kv_heads][n_kv]`.
    /// `causal = Some(q_pos)` keeps tokens `t ≤ q_pos`.
    #[allow(clippy::too_many_arguments)]
    pub fn fused_attention(
        &mut self,
        q_sketch: &[f32],
        keys: &[u8],
        values: &[u8],
        polar: Option<bool>,
        n_heads: u32,
        n_kv_heads: u32,
        sm_scale: f32,
        causal: Option<u32>,
    ) -> Result<Vec<f32>, KvQuantError> {
        const K: &str = "fused_attn_qjl";
        check_heads(K, n_heads, n_kv_heads)?;
        check(K, "q_sketch", q_sketch.len() == (n_heads * 256) as usize, || {
            format!("{} sketch values, n_heads × 256 = {}", q_sketch.len(), n_heads * 256)
        })?;
        let per_head = 34 * n_kv_heads as usize;
        check(K, "keys", !keys.is_empty() && keys.len().is_multiple_of(per_head), || {
            format!("{} key bytes: not whole 34-byte blocks for {n_kv_heads} KV heads", keys.len())
        })?;
        let n = (keys.len() / per_head) as u32;
        let vb = if polar.is_some() { 82 } else { 56 };
        check(K, "values", values.len() == n as usize * n_kv_heads as usize * vb, || {
            format!("{} value bytes; {n} tokens × {n_kv_heads} heads × {vb} = {}", values.len(), n as usize * n_kv_heads as usize * vb)
        })?;
        let (levels, signs): (&[f32], &[f32]) =
            if polar.is_some() { (&C::POLAR_CENTROIDS, &C::POLAR_PSI) } else { (&C::TBQ3_CODEBOOK, &C::TBQ_SIGNS) };
        let args = Args::new()
            .buffer("q_sketch", HostBuffer::from_f32(q_sketch))
            .buffer("k", HostBuffer::u32_image(keys))
            .buffer("v", HostBuffer::u32_image(values))
            .buffer("v_levels", HostBuffer::from_f32(levels))
            .buffer("v_signs", HostBuffer::from_f32(signs))
            .buffer("out", HostBuffer::zeros(StorageType::F32, (n_heads * 128) as usize))
            .scalar("n_heads", n_heads)
            .scalar("n_kv_heads", n_kv_heads)
            .scalar("n_kv", n)
            .scalar("sm_scale", sm_scale)
            .scalar("v_format", polar.is_some() as u32)
            .scalar("v_use_qjl", polar.unwrap_or(false) as u32)
            .scalar("causal", causal.is_some() as u32)
            .scalar("q_pos", causal.unwrap_or(0));
        self.run(K, args, [n_heads, 1, 1], "out")
    }
}

impl Device<'_> {
    /// Copies `words` through the catalogue's `copy_words` kernel (the bandwidth
    /// baseline of the benchmarks); returns the copy.
    pub fn copy_words(&mut self, words: &[u32]) -> Result<Vec<u32>, KvQuantError> {
        const K: &str = "copy_words";
        check(K, "words", !words.is_empty(), || "nothing to copy".into())?;
        let n = words.len() as u32;
        let args =
            Args::new().buffer("src", HostBuffer::from_u32(words)).buffer("dst", HostBuffer::zeros(StorageType::U32, words.len())).scalar("n", n);
        let bytes = self.run_bytes(K, args, [n.div_ceil(256 * 4), 1, 1], "dst")?;
        Ok(bytes.chunks(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// Reads `words` through the catalogue's `read_words` kernel, which does nothing
    /// else with them (the L2 flush's reader): the benchmarks' bound on any kernel that
    /// must read those bytes. True where an invocation's four words (`copy_words`'s
    /// layout: `i`, `i + 256`, `i + 512`, `i + 768` in each 1024) XOR to `u32::MAX`.
    pub fn read_words(&mut self, words: &[u32]) -> Result<bool, KvQuantError> {
        const K: &str = "read_words";
        check(K, "words", !words.is_empty(), || "nothing to read".into())?;
        let n = words.len() as u32;
        let args = Args::new()
            .buffer("words", HostBuffer::from_u32(words))
            .buffer("hits", HostBuffer::zeros(StorageType::U32, 1))
            .scalar("n", n)
            .scalar("tag", u32::MAX);
        let hits = self.run_bytes(K, args, [n.div_ceil(1024), 1, 1], "hits")?;
        Ok(hits.iter().any(|&b| b != 0))
    }
}

#[cfg(test)]
mod tests {
    use super::score_tiling;

    #[test]
    fn score_tiling_covers_every_tile_with_about_the_target_groups() {
        for (n_tokens, tile, heads, target) in [(65536, 64, 8, 1024), (65536, 128, 8, 512), (16384, 128, 8, 512), (300, 64, 1, 1024), (1, 64, 3, 512)]
        {
            let (per, groups) = score_tiling(n_tokens, tile, heads, target);
            let tiles = n_tokens.div_ceil(tile);
            assert!(per >= 1 && groups * per >= tiles, "{n_tokens} rows: {groups} groups × {per} tiles miss some of {tiles}");
            assert!((groups - 1) * per < tiles, "{n_tokens} rows: a workgroup without tiles");
            assert!(groups * heads <= target.max(heads), "{n_tokens} rows: {groups} × {heads} groups over {target}");
        }
        // L = 65536, 8 KV heads: 8 tiles of 64 rows per group (1024 groups); 8 tiles of
        // 128 keys per QJL group (512 groups).
        assert_eq!(score_tiling(65536, 64, 8, 1024), (8, 128));
        assert_eq!(score_tiling(65536, 128, 8, 512), (8, 64));
    }
}
