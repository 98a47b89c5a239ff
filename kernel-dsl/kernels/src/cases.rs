//! Validation cases of the catalogue's kernels: shapes that cover full and partial
//! workgroups, rows shorter than a workgroup, and several rows.

use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::types::Literal;

fn rms_norm(rows: u32, cols: u32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -3.0, hi: 3.0 })
        .buffer("w", cols as usize, Fill::Uniform { lo: 0.5, hi: 1.5 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("eps", Literal::f32(1e-6))
}

fn layer_norm(rows: u32, cols: u32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -3.0, hi: 5.0 })
        .buffer("w", cols as usize, Fill::Uniform { lo: 0.5, hi: 1.5 })
        .buffer("b", cols as usize, Fill::Uniform { lo: -0.5, hi: 0.5 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("eps", Literal::f32(1e-5))
}

fn softmax(rows: u32, cols: u32, scale: f32) -> Case {
    let n = (rows * cols) as usize;
    Case::new(format!("{rows} rows x {cols}, scale {scale}"), [rows, 1, 1])
        .buffer("x", n, Fill::Uniform { lo: -8.0, hi: 8.0 })
        .buffer("y", n, Fill::Zeros)
        .scalar("n_cols", Literal::U32(cols))
        .scalar("scale", Literal::f32(scale))
}

/// A cache format of `attn_decode_chunk`: its `k_type` code, row bytes at D = 128, and
/// the word fill that keeps every stored value finite and normal: each 16-bit half gets
/// exponent bits 0b011xx (|x| in [1/8, 2)) for f16 and for the f16 scales and quant
/// bytes of q8_0 / q4_0 (34- and 18-byte blocks start at even bytes, so each scale is a
/// whole half); f32 and bf16 get exponents 120 … 127.
#[derive(Clone, Copy)]
enum CacheFormat {
    F32,
    F16,
    Bf16,
    Q8_0,
    Q4_0,
}

impl CacheFormat {
    fn code(self) -> u32 {
        self as u32
    }

    fn row_bytes(self, d: usize) -> usize {
        match self {
            CacheFormat::F32 => 4 * d,
            CacheFormat::F16 | CacheFormat::Bf16 => 2 * d,
            CacheFormat::Q8_0 => d / 32 * 34,
            CacheFormat::Q4_0 => d / 32 * 18,
        }
    }

    fn fill(self) -> Fill {
        match self {
            CacheFormat::F32 => Fill::Bits { and: 0x83ff_ffff, or: 0x3c00_0000 },
            CacheFormat::Bf16 => Fill::Bits { and: 0x83ff_83ff, or: 0x3c00_3c00 },
            CacheFormat::F16 | CacheFormat::Q8_0 | CacheFormat::Q4_0 => Fill::Bits { and: 0x8fff_8fff, or: 0x3000_3000 },
        }
    }
}

/// B = 2 sequences of up to 300 tokens, 8 query heads over 2 KV heads (GQA 4), D = 128,
/// pages of 16 tokens; `chunk_tokens` 64 (fast chunks of 64, one deterministic chunk of
/// 128 per workgroup) or 256 (fast chunks of 256, two deterministic chunks per
/// workgroup). `v_fill` replaces the V format's safe fill.
fn attention_chunk(kf: CacheFormat, vf: CacheFormat, v_fill: Option<Fill>, label: &str, softcap: f32, max_bias: f32, chunk_tokens: u32) -> Case {
    attention_chunk_lengths(kf, vf, v_fill, label, softcap, max_bias, chunk_tokens, (1, 300))
}

/// [`attention_chunk`] with sequence lengths drawn from `kv_len` (inclusive; at most
/// 600, so that five partial rows cover every workgroup of every mode).
#[allow(clippy::too_many_arguments)]
fn attention_chunk_lengths(
    kf: CacheFormat,
    vf: CacheFormat,
    v_fill: Option<Fill>,
    label: &str,
    softcap: f32,
    max_bias: f32,
    chunk_tokens: u32,
    kv_len: (i64, i64),
) -> Case {
    attention_chunk_det_long(kf, vf, v_fill, label, softcap, max_bias, chunk_tokens, kv_len, 4096)
}

/// [`attention_chunk_lengths`] where deterministic mode cuts sequences longer than
/// `det_long` tokens into 256-token chunks (the runtime's rule has 4096; a smaller one
/// puts sequences of both classes in one launch).
#[allow(clippy::too_many_arguments)]
fn attention_chunk_det_long(
    kf: CacheFormat,
    vf: CacheFormat,
    v_fill: Option<Fill>,
    label: &str,
    softcap: f32,
    max_bias: f32,
    chunk_tokens: u32,
    kv_len: (i64, i64),
    det_long: u32,
) -> Case {
    let cache = [(kf, kf.fill()), (vf, v_fill.unwrap_or(vf.fill()))];
    attention_chunk_inputs(label.to_string(), 8, 2, 5, chunk_tokens, kv_len, cache, true)
        .scalar("softcap", Literal::f32(softcap))
        .scalar("max_bias", Literal::f32(max_bias))
        .scalar("has_mask", Literal::U32(1))
        .scalar("k_type", Literal::U32(kf.code()))
        .scalar("v_type", Literal::U32(vf.code()))
        .scalar("det_long", Literal::U32(det_long))
}

/// What every decode chunk kernel reads and writes: B = 2 sequences with lengths in
/// `kv_len`, `hq` query heads over `hkv` KV heads, D = 128, pages of 16 tokens in a random
/// table, K and V images in `cache`'s formats and fills, the mask (or a one-element
/// placeholder), `n_chunks` partial rows per head, and the scalars they share.
#[allow(clippy::too_many_arguments)]
fn attention_chunk_inputs(
    label: String,
    hq: u32,
    hkv: u32,
    n_chunks: u32,
    chunk_tokens: u32,
    kv_len: (i64, i64),
    cache: [(CacheFormat, Fill); 2],
    mask: bool,
) -> Case {
    let (b, d, p) = (2u32, 128usize, 16u32);
    let pages_per_seq = (kv_len.1 as u32).div_ceil(p) + 1;
    let n_pages = (b * pages_per_seq) as usize;
    let words = |f: CacheFormat| n_pages * p as usize * hkv as usize * f.row_bytes(d) / 4;
    let [(kf, k_fill), (vf, v_fill)] = cache;
    Case::new(label, [n_chunks, hkv, b])
        .buffer("q", (b * hq) as usize * d, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("k", words(kf), k_fill)
        .buffer("v", words(vf), v_fill)
        .buffer("block_table", n_pages, Fill::Ints { lo: 0, hi: n_pages as i64 - 1 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: kv_len.0, hi: kv_len.1 })
        .buffer("mask", if mask { (b * pages_per_seq * p) as usize } else { 1 }, Fill::Uniform { lo: -2.0, hi: 0.0 })
        .buffer("part_m", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_l", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_acc", (b * hq * n_chunks) as usize * d, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_kv_heads", Literal::U32(hkv))
        .scalar("page_size", Literal::U32(p))
        .scalar("pages_per_seq", Literal::U32(pages_per_seq))
        .scalar("n_chunks", Literal::U32(n_chunks))
        .scalar("chunk_tokens", Literal::U32(chunk_tokens))
        .scalar("scale", Literal::f32(0.088_388_35))
}

/// A cache format of `attn_decode_wide`: its code, E4M3 dimensions (FP8 rows), row
/// bytes of `d` elements and a fill that keeps every stored value finite and normal.
/// FP8 rows take words whose bytes 1 and 3 are 0x3c … 0x3f or 0xbc … 0xbf and whose bytes
/// 0 and 2 have bit 6 clear: the f32 scale (always the first word) has exponent 120 … 127,
/// no E4M3 byte is the NaN code, and a bf16 half (low or high) has exponent 120 … 127.
#[derive(Clone, Copy)]
enum WideFormat {
    /// One of `attn_decode_chunk`'s five.
    Plain(CacheFormat),
    /// `fp8_e4m3` (all dimensions E4M3).
    Fp8,
    /// `fp8_mixed` with this many E4M3 dimensions.
    Mixed(u32),
}

impl WideFormat {
    fn code(self) -> u32 {
        match self {
            WideFormat::Plain(f) => f.code(),
            WideFormat::Fp8 => 5,
            WideFormat::Mixed(_) => 6,
        }
    }

    fn fp8_dims(self, d: u32) -> u32 {
        match self {
            WideFormat::Plain(_) => 0,
            WideFormat::Fp8 => d,
            WideFormat::Mixed(f) => f,
        }
    }

    fn row_bytes(self, d: u32) -> usize {
        match self {
            WideFormat::Plain(f) => f.row_bytes(d as usize),
            _ => (4 + 2 * d - self.fp8_dims(d)) as usize,
        }
    }

    fn fill(self) -> Fill {
        match self {
            WideFormat::Plain(f) => f.fill(),
            _ => Fill::Bits { and: 0x83bf_83bf, or: 0x3c00_3c00 },
        }
    }

    fn name(self) -> String {
        match self {
            WideFormat::Plain(f) => ["f32", "f16", "bf16", "q8_0", "q4_0"][f.code() as usize].to_string(),
            WideFormat::Fp8 => "fp8_e4m3".into(),
            WideFormat::Mixed(f) => format!("fp8_mixed({f})"),
        }
    }
}

/// `attn_decode_wide` at its default dimensions (K 576, V 512): B = 2 sequences with
/// lengths in `kv_len`, `hq` query heads over `hkv` KV heads, pages of 16 tokens in a
/// random table, the mask, `chunk_tokens` per fast chunk; deterministic chunks of 256
/// tokens past `det_long`.
#[allow(clippy::too_many_arguments)]
fn attention_wide(
    kf: WideFormat,
    vf: WideFormat,
    hq: u32,
    hkv: u32,
    chunk_tokens: u32,
    kv_len: (i64, i64),
    softcap: f32,
    max_bias: f32,
    det_long: u32,
) -> Case {
    let (b, kd, vd, p) = (2u32, 576u32, 512u32, 16u32);
    let pages_per_seq = (kv_len.1 as u32).div_ceil(p) + 1;
    let n_pages = (b * pages_per_seq) as usize;
    let n_chunks = (kv_len.1 as u32).div_ceil(chunk_tokens.min(128));
    let words = |f: WideFormat, d: u32| n_pages * p as usize * hkv as usize * f.row_bytes(d) / 4;
    let mut label = format!(
        "{} K, {} V, B=2 Hq={hq} Hkv={hkv} K 576 V 512 P=16, mask, {} … {} tokens, {chunk_tokens}-token chunks",
        kf.name(),
        vf.name(),
        kv_len.0,
        kv_len.1
    );
    if softcap > 0.0 || max_bias > 0.0 {
        label += &format!(", softcap {softcap}, ALiBi {max_bias}");
    }
    if det_long < 4096 {
        label += &format!(", deterministic 256-token chunks past {det_long} tokens");
    }
    Case::new(label, [n_chunks, hkv * (hq / hkv).div_ceil(16), b])
        .buffer("q", (b * hq * kd) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("k", words(kf, kd), kf.fill())
        .buffer("v", words(vf, vd), vf.fill())
        .buffer("block_table", n_pages, Fill::Ints { lo: 0, hi: n_pages as i64 - 1 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: kv_len.0, hi: kv_len.1 })
        .buffer("mask", (b * pages_per_seq * p) as usize, Fill::Uniform { lo: -2.0, hi: 0.0 })
        .buffer("part_m", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_l", (b * hq * n_chunks) as usize, Fill::Zeros)
        .buffer("part_acc", (b * hq * n_chunks * vd) as usize, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_kv_heads", Literal::U32(hkv))
        .scalar("page_size", Literal::U32(p))
        .scalar("pages_per_seq", Literal::U32(pages_per_seq))
        .scalar("n_chunks", Literal::U32(n_chunks))
        .scalar("chunk_tokens", Literal::U32(chunk_tokens))
        .scalar("scale", Literal::f32(0.041_666_67))
        .scalar("softcap", Literal::f32(softcap))
        .scalar("max_bias", Literal::f32(max_bias))
        .scalar("has_mask", Literal::U32(1))
        .scalar("k_type", Literal::U32(kf.code()))
        .scalar("v_type", Literal::U32(vf.code()))
        .scalar("k_fp8_dims", Literal::U32(kf.fp8_dims(kd)))
        .scalar("v_fp8_dims", Literal::U32(vf.fp8_dims(vd)))
        .scalar("det_long", Literal::U32(det_long))
}

/// `attn_decode_chunk_mma`: two sequences with lengths in `kv_len` (at most 600), `hq`
/// query heads over `hkv` KV heads, f16 K/V at D = 128, pages of 16 tokens in a random
/// table, `chunk_tokens` per workgroup, with or without the mask; with the mask, sinks
/// (which the `finish` variant weighs where the launch has one chunk per sequence).
fn attention_chunk_mma(hq: u32, hkv: u32, chunk_tokens: u32, kv_len: (i64, i64), has_mask: bool) -> Case {
    let label = format!(
        "f16 K/V, B=2 Hq={hq} Hkv={hkv} D=128 P=16, {} … {} tokens, {chunk_tokens}-token chunks, {}",
        kv_len.0,
        kv_len.1,
        if has_mask { "mask" } else { "no mask" }
    );
    let f16 = (CacheFormat::F16, CacheFormat::F16.fill());
    let n_chunks = (kv_len.1 as u32).div_ceil(chunk_tokens);
    attention_chunk_inputs(label, hq, hkv, n_chunks, chunk_tokens, kv_len, [f16.clone(), f16], has_mask)
        .buffer("sinks", hq as usize, Fill::Uniform { lo: -2.0, hi: 2.0 })
        .buffer("out", (2 * hq * 128) as usize, Fill::Zeros)
        .buffer("arrivals", (2 * hkv) as usize, Fill::Zeros)
        .scalar("has_mask", Literal::U32(has_mask as u32))
        .scalar("has_sinks", Literal::U32(has_mask as u32))
}

/// `attn_prefill_mma`: two sequences of 1 … `slot` new queries each (starts `slot`
/// tokens apart in dense `[token][head][128]` rows) over caches of `slot` … `max_len`
/// tokens, `hq` query heads over `hkv` KV heads, f16 K/V, pages of 16 in a random table,
/// with or without the mask and sinks.
fn attention_prefill_mma(hq: u32, hkv: u32, slot: u32, max_len: u32, options: bool) -> Case {
    let (b, d, p) = (2u32, 128u32, 16u32);
    let pages_per_seq = max_len.div_ceil(p);
    let n_pages = (b * pages_per_seq) as usize;
    let rows = (b * slot * hq * d) as usize;
    let label = format!(
        "f16 K/V, B=2 Hq={hq} Hkv={hkv} D=128 P=16, 1 … {slot} queries over {slot} … {max_len} tokens, {}",
        if options { "mask and sinks" } else { "no mask, no sinks" }
    );
    // Row tiles in pairs: two heads of one KV head, or (an odd group) two query blocks.
    let pair_heads = (hq / hkv).is_multiple_of(2);
    let grid = if pair_heads { [hq / 2, slot.div_ceil(64), b] } else { [hq, slot.div_ceil(128), b] };
    Case::new(label, grid)
        .buffer("q", rows, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("k", n_pages * (p * hkv * d / 2) as usize, CacheFormat::F16.fill())
        .buffer("v", n_pages * (p * hkv * d / 2) as usize, CacheFormat::F16.fill())
        .buffer("block_table", n_pages, Fill::Ints { lo: 0, hi: n_pages as i64 - 1 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: slot as i64, hi: max_len as i64 })
        .buffer("q_tokens", b as usize, Fill::Ints { lo: 1, hi: slot as i64 })
        .buffer("q_start", b as usize, Fill::Steps { step: slot })
        .buffer("mask", if options { n_pages * p as usize } else { 1 }, Fill::Uniform { lo: -2.0, hi: 0.0 })
        .buffer("sinks", if options { hq as usize } else { 1 }, Fill::Uniform { lo: -2.0, hi: 2.0 })
        .buffer("out", rows, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_kv_heads", Literal::U32(hkv))
        .scalar("pages_per_seq", Literal::U32(pages_per_seq))
        .scalar("q_token_stride", Literal::U32(hq * d))
        .scalar("q_head_stride", Literal::U32(d))
        .scalar("out_token_stride", Literal::U32(hq * d))
        .scalar("out_head_stride", Literal::U32(d))
        .scalar("q_len", Literal::U32(rows as u32))
        .scalar("out_len", Literal::U32(rows as u32))
        .scalar("scale", Literal::f32(0.088_388_35))
        .scalar("has_mask", Literal::U32(options as u32))
        .scalar("has_sinks", Literal::U32(options as u32))
        .scalar("pair_heads", Literal::U32(pair_heads as u32))
}

/// `hq` heads of two sequences over `n_chunks` chunks of 64 tokens, sequence lengths in
/// `kv_len`, with or without sinks.
fn attention_combine(hq: u32, n_chunks: u32, kv_len: (i64, i64), sinks: bool) -> Case {
    attention_combine_det_long(hq, n_chunks, kv_len, sinks, 4096)
}

/// [`attention_combine`] with deterministic 256-token chunks past `det_long` tokens.
fn attention_combine_det_long(hq: u32, n_chunks: u32, kv_len: (i64, i64), sinks: bool, det_long: u32) -> Case {
    let (b, d) = (2u32, 128usize);
    let parts = (b * hq * n_chunks) as usize;
    let (sink_len, sink_fill) = if sinks { (hq as usize, Fill::Uniform { lo: -3.0, hi: 3.0 }) } else { (1, Fill::Zeros) };
    let long = if det_long < 4096 { format!(", deterministic 256-token chunks past {det_long} tokens") } else { String::new() };
    Case::new(format!("2 seqs x {hq} heads x {n_chunks} chunks, {}{long}", if sinks { "sinks" } else { "no sinks" }), [hq, b, 1])
        .buffer("part_m", parts, Fill::Uniform { lo: -5.0, hi: 5.0 })
        .buffer("part_l", parts, Fill::Uniform { lo: 0.5, hi: 50.0 })
        .buffer("part_acc", parts * d, Fill::Uniform { lo: -20.0, hi: 20.0 })
        .buffer("kv_len", b as usize, Fill::Ints { lo: kv_len.0, hi: kv_len.1 })
        .buffer("sinks", sink_len, sink_fill)
        .buffer("out", (b * hq) as usize * d, Fill::Zeros)
        .scalar("n_heads", Literal::U32(hq))
        .scalar("n_chunks", Literal::U32(n_chunks))
        .scalar("chunk_tokens", Literal::U32(64))
        .scalar("has_sinks", Literal::U32(sinks as u32))
        .scalar("det_long", Literal::U32(det_long))
}

/// Block images: every 16-bit half a safe f16 or bf16 (|x| in [1/8, 2) as f16; normal as
/// bf16), every other bit random, so codes, indices and sign bits cover their range.
const BLOCK_WORDS: Fill = Fill::Bits { and: 0x8fff_8fff, or: 0x3000_3000 };

fn words(bytes: usize) -> usize {
    bytes.div_ceil(4)
}

/// `n_heads` query heads over `n_kv_heads` KV heads of `n_tokens` rows. Every `format`
/// variant runs every case, so the rows are sized for the widest layout (72 bytes) and
/// the codebook for the largest (512 levels); each variant reads its own layout.
fn turbo_score(real_domain: u32, n_heads: u32, n_kv_heads: u32, n_tokens: u32, tiles_per_group: u32) -> Case {
    let domain = if real_domain != 0 { "real (TBQ)" } else { "rotated" };
    Case::new(
        format!("{domain} domain, Hq {n_heads} Hkv {n_kv_heads}, {n_tokens} rows, {tiles_per_group} tiles/group"),
        [n_tokens.div_ceil(64 * tiles_per_group), n_kv_heads, 1],
    )
    .buffer("q", (n_heads * 128) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("k", words((n_kv_heads * n_tokens) as usize * 72), BLOCK_WORDS)
    .buffer("levels", 512, Fill::Uniform { lo: -2.0, hi: 2.0 })
    .buffer("signs", 32, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("scores", (n_heads * n_tokens) as usize, Fill::Zeros)
    .scalar("n_heads", Literal::U32(n_heads))
    .scalar("n_kv_heads", Literal::U32(n_kv_heads))
    .scalar("n_tokens", Literal::U32(n_tokens))
    .scalar("real_domain", Literal::U32(real_domain))
    .scalar("tiles_per_group", Literal::U32(tiles_per_group))
}

fn qjl_score(project: u32, n_heads: u32, n_kv_heads: u32, n_tokens: u32, tiles_per_group: u32) -> Case {
    let qdim = if project != 0 { 128 } else { 256 };
    Case::new(
        format!(
            "{} Hq {n_heads} Hkv {n_kv_heads}, {n_tokens} tokens, {tiles_per_group} tiles/group",
            if project != 0 { "raw q (mul_mv)" } else { "q sketch" }
        ),
        [n_tokens.div_ceil(128 * tiles_per_group), n_kv_heads, 1],
    )
    .buffer("q", (n_heads * qdim) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("k", words((n_kv_heads * n_tokens * 34) as usize), BLOCK_WORDS)
    .buffer("prj", if project != 0 { 32768 } else { 1 }, Fill::Uniform { lo: -2.0, hi: 2.0 })
    .buffer("scores", (n_heads * n_tokens) as usize, Fill::Zeros)
    .scalar("n_heads", Literal::U32(n_heads))
    .scalar("n_kv_heads", Literal::U32(n_kv_heads))
    .scalar("n_tokens", Literal::U32(n_tokens))
    .scalar("project", Literal::U32(project))
    .scalar("tiles_per_group", Literal::U32(tiles_per_group))
}

fn polar_score(use_qjl: u32, preht: u32, n_heads: u32, n_kv_heads: u32, n_tokens: u32, tiles_per_group: u32) -> Case {
    Case::new(
        format!("residual {use_qjl}, pre-Hadamard q {preht}, Hq {n_heads} Hkv {n_kv_heads}, {n_tokens} rows, {tiles_per_group} tiles/group"),
        [n_tokens.div_ceil(64 * tiles_per_group), n_kv_heads, 1],
    )
    .buffer("q", (n_heads * 128) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("k", words((n_kv_heads * n_tokens) as usize * 82), BLOCK_WORDS)
    .buffer("centroids", 16, Fill::Uniform { lo: -3.0, hi: 3.0 })
    .buffer("psi", 128, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("scores", (n_heads * n_tokens) as usize, Fill::Zeros)
    .scalar("n_heads", Literal::U32(n_heads))
    .scalar("n_kv_heads", Literal::U32(n_kv_heads))
    .scalar("n_tokens", Literal::U32(n_tokens))
    .scalar("use_qjl", Literal::U32(use_qjl))
    .scalar("preht", Literal::U32(preht))
    .scalar("tiles_per_group", Literal::U32(tiles_per_group))
}

fn fused(v_format: u32, v_use_qjl: u32, n_heads: u32, n_kv_heads: u32, n_kv: u32, causal: Option<u32>) -> Case {
    let vb = if v_format == 0 { 56 } else { 82 };
    Case::new(
        format!(
            "{} V, Hq {n_heads} Hkv {n_kv_heads}, {n_kv} tokens{}",
            if v_format == 0 { "tbq3" } else { "polar" },
            causal.map(|p| format!(", causal at {p}")).unwrap_or_default()
        ),
        [n_heads, 1, 1],
    )
    .buffer("q_sketch", (n_heads * 256) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("k", words((n_kv_heads * n_kv * 34) as usize), BLOCK_WORDS)
    .buffer("v", words((n_kv_heads * n_kv * vb) as usize), BLOCK_WORDS)
    .buffer("v_levels", if v_format == 0 { 8 } else { 16 }, Fill::Uniform { lo: -2.0, hi: 2.0 })
    .buffer("v_signs", if v_format == 0 { 32 } else { 128 }, Fill::Uniform { lo: -1.0, hi: 1.0 })
    .buffer("out", (n_heads * 128) as usize, Fill::Zeros)
    .scalar("n_heads", Literal::U32(n_heads))
    .scalar("n_kv_heads", Literal::U32(n_kv_heads))
    .scalar("n_kv", Literal::U32(n_kv))
    .scalar("sm_scale", Literal::f32(0.088_388_35))
    .scalar("v_format", Literal::U32(v_format))
    .scalar("v_use_qjl", Literal::U32(v_use_qjl))
    .scalar("causal", Literal::U32(causal.is_some() as u32))
    .scalar("q_pos", Literal::U32(causal.unwrap_or(0)))
}

/// `gated_delta_net`: `b` sequences of `t` tokens, `h` value heads over `hk` q/k heads,
/// states in a cache of `b + 2` slots (shuffled slots with `gather`), buffers sized for
/// the largest head (S = 128) and the grid too (smaller heads leave workgroups idle).
fn gated_delta_net(b: u32, t: u32, h: u32, hk: u32) -> Case {
    let s = 128usize;
    let (bu, tu, hu, hku) = (b as usize, t as usize, h as usize, hk as usize);
    let slots = b + 2;
    Case::new(format!("B={b} T={t} H={h} Hk={hk}, {slots} state slots"), [8, h, b])
        .buffer("q", bu * tu * hku * s, Fill::Uniform { lo: -0.5, hi: 0.5 })
        .buffer("k", bu * tu * hku * s, Fill::Uniform { lo: -0.5, hi: 0.5 })
        .buffer("v", bu * tu * hu * s, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("g", bu * tu * hu * s, Fill::Uniform { lo: -1.0, hi: 0.0 })
        .buffer("beta", bu * tu * hu, Fill::Uniform { lo: 0.0, hi: 1.0 })
        .buffer("a", hu, Fill::Uniform { lo: -2.0, hi: -0.1 })
        .buffer("dt_bias", hu * s, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("slots", bu, Fill::Distinct { n: slots })
        .buffer("state", slots as usize * hu * s * s, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("out", bu * tu * hu * s, Fill::Zeros)
        .buffer("state_out", bu * hu * s * s, Fill::Zeros)
        .scalar("n_k_heads", Literal::U32(hk))
        .scalar("n_tokens", Literal::U32(t))
}

/// `ssm_conv`: `b` sequences of `t` new tokens over `channels` channels, conv states in a
/// cache of `b + 2` rows, buffers sized for the widest window (4).
fn ssm_conv(b: u32, t: u32, channels: u32) -> Case {
    let (bu, tu, c) = (b as usize, t as usize, channels as usize);
    Case::new(format!("B={b} T={t} C={channels}"), [channels.div_ceil(128), b, 1])
        .buffer("x", bu * c * (3 + tu), Fill::Uniform { lo: -2.0, hi: 2.0 })
        .buffer("weight", c * 4, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("slots", bu, Fill::Distinct { n: b + 2 })
        .buffer("conv_state", (bu + 2) * c * 3, Fill::Uniform { lo: -2.0, hi: 2.0 })
        .buffer("out", bu * tu * c, Fill::Zeros)
        .scalar("channels", Literal::U32(channels))
        .scalar("n_tokens", Literal::U32(t))
}

/// `ssm_scan`: `b` sequences of `t` tokens, `h` heads of `p` channels, `n` state entries,
/// `groups` B/C groups, states in a cache of `b + 2` slots read through shuffled ids.
fn ssm_scan(b: u32, t: u32, h: u32, p: u32, n: u32, groups: u32) -> Case {
    let (bu, tu, hu, pu, nu, gu) = (b as usize, t as usize, h as usize, p as usize, n as usize, groups as usize);
    Case::new(format!("B={b} T={t} H={h} P={p} N={n} groups={groups}"), [(h * p).div_ceil(64), b, 1])
        .buffer("state", (bu + 2) * hu * pu * nu, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("x", bu * tu * hu * pu, Fill::Uniform { lo: -1.0, hi: 1.0 })
        // Both sides of softplus's threshold of 20.
        .buffer("dt", bu * tu * hu, Fill::Uniform { lo: -4.0, hi: 24.0 })
        .buffer("a", hu * nu, Fill::Uniform { lo: -2.0, hi: -0.05 })
        .buffer("b_in", bu * tu * gu * nu, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("c_in", bu * tu * gu * nu, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("ids", bu, Fill::Distinct { n: b + 2 })
        .buffer("y", bu * tu * hu * pu, Fill::Zeros)
        .buffer("state_out", bu * hu * pu * nu, Fill::Zeros)
        .scalar("n_heads", Literal::U32(h))
        .scalar("head_dim", Literal::U32(p))
        .scalar("d_state", Literal::U32(n))
        .scalar("n_groups", Literal::U32(groups))
        .scalar("n_tokens", Literal::U32(t))
}

/// `copy_rows`: 6 rows of 260 values in entries of two rows, through a table of three
/// distinct entries of four, between buffers of 8 rows of 300 with offsets.
fn copy_rows() -> Case {
    Case::new("6 rows x 260 values, entries of 2 rows, offsets 20 / 30", [2, 6, 1])
        .buffer("src", 8 * 300, Fill::Uniform { lo: -1.0, hi: 1.0 })
        .buffer("slots", 3, Fill::Distinct { n: 4 })
        .buffer("dst", 8 * 300, Fill::Zeros)
        .scalar("row_len", Literal::U32(260))
        .scalar("per_entry", Literal::U32(2))
        .scalar("src_stride", Literal::U32(300))
        .scalar("src_offset", Literal::U32(20))
        .scalar("dst_stride", Literal::U32(300))
        .scalar("dst_offset", Literal::U32(30))
        .scalar("n_src_rows", Literal::U32(8))
        .scalar("n_dst_rows", Literal::U32(8))
}

/// The validation cases of a catalogue kernel, by name; `None` for a kernel without
/// cases (the validator reports that as an error, never as a pass).
pub fn validation_cases(kernel: &str) -> Option<Vec<Case>> {
    Some(match kernel {
        "rms_norm_f32" | "rms_norm_f16" => vec![rms_norm(1, 100), rms_norm(4, 1000), rms_norm(3, 4096)],
        "layer_norm_f32" | "layer_norm_f16" => vec![layer_norm(1, 7), layer_norm(4, 1000), layer_norm(3, 4096)],
        // Rows shorter than, as long as and longer than a workgroup (ties and NaNs:
        // tests/tests/argmax.rs, with chosen values).
        "argmax_rows" => [(1u32, 5u32), (4, 1000), (3, 4096), (2, 256)]
            .into_iter()
            .map(|(rows, cols)| {
                Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
                    .buffer("x", (rows * cols) as usize, Fill::Uniform { lo: -100.0, hi: 100.0 })
                    .buffer("value", rows as usize, Fill::Zeros)
                    .buffer("index", rows as usize, Fill::Zeros)
                    .scalar("n_cols", Literal::U32(cols))
            })
            .collect(),
        "softmax_rows" => vec![softmax(1, 5, 1.0), softmax(4, 1000, 0.125), softmax(2, 4096, 2.0)],
        "attn_decode_combine" => vec![
            attention_combine(8, 5, (1, 300), true),
            // More than one 1024-chunk block of weights; chunk lanes with several batches
            // of sixteen chunks and a partial one.
            attention_combine(2, 1100, (66_000, 70_400), false),
            // Sequences on both sides of a deterministic length threshold of 150 tokens.
            attention_combine_det_long(8, 5, (1, 300), true, 150),
        ],
        "attn_decode_chunk" => {
            use CacheFormat::*;
            vec![
                // First, the smallest: CI's pass under GPU-assisted validation (which runs
                // each kernel's first case, about a thousand times slower) takes it.
                attention_chunk_inputs(
                    "f16 K/V, B=2 Hq=2 Hkv=1 D=128 P=16, mask, up to 40 tokens".into(),
                    2,
                    1,
                    1,
                    64,
                    (1, 40),
                    [(F16, F16.fill()), (F16, F16.fill())],
                    true,
                )
                .scalar("softcap", Literal::f32(0.0))
                .scalar("max_bias", Literal::f32(0.0))
                .scalar("has_mask", Literal::U32(1))
                .scalar("k_type", Literal::U32(F16.code()))
                .scalar("v_type", Literal::U32(F16.code()))
                .scalar("det_long", Literal::U32(4096)),
                attention_chunk(F16, F16, None, "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask", 0.0, 0.0, 64),
                // 256-token workgroups: two deterministic chunks each.
                attention_chunk(F16, F16, None, "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 256-token workgroups", 0.0, 0.0, 256),
                attention_chunk(Q8_0, Bf16, None, "q8_0 K, bf16 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, softcap 20, ALiBi 8", 20.0, 8.0, 64),
                attention_chunk(F32, Q4_0, None, "f32 K, q4_0 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 256-token workgroups", 0.0, 0.0, 256),
                // 512-token workgroups where K is staged (`async_k`; 256 without, and two
                // deterministic chunks), sequences of 400 … 600 tokens: a workgroup with
                // more than 256 tokens, and one with a last run of fewer than 32.
                attention_chunk_lengths(F16, F16, None, "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 512-token workgroups", 0.0, 0.0, 512, (400, 600)),
                // Deterministic 256-token chunks past 150 tokens: sequences of 1 … 300
                // tokens on both sides of the threshold, with one and with two 128-token
                // chunks per workgroup for the short ones.
                attention_chunk_det_long(
                    F16,
                    F16,
                    None,
                    "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, deterministic 256-token chunks past 150 tokens",
                    0.0,
                    0.0,
                    64,
                    (1, 300),
                    150,
                ),
                attention_chunk_det_long(
                    Q8_0,
                    Bf16,
                    None,
                    "q8_0 K, bf16 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 256-token workgroups, deterministic 256-token chunks past 150 tokens",
                    20.0,
                    8.0,
                    256,
                    (1, 300),
                    150,
                ),
                // 512-token workgroups, sequences of 200 … 600 tokens: in the `long_pairs`
                // variant (two 256-token chunks per workgroup) second chunks of 0 … 256
                // tokens, some groups with fewer than eight of their rows, f16 V and the
                // other formats' V pass.
                attention_chunk_lengths(
                    F16,
                    F16,
                    None,
                    "f16 K/V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 512-token workgroups, 200 … 600 tokens",
                    0.0,
                    0.0,
                    512,
                    (200, 600),
                ),
                attention_chunk_lengths(
                    Q8_0,
                    Bf16,
                    None,
                    "q8_0 K, bf16 V, B=2 Hq=8 Hkv=2 D=128 P=16, mask, 512-token workgroups, 200 … 600 tokens",
                    0.0,
                    0.0,
                    512,
                    (200, 600),
                ),
                // Both halves of every V word zero or subnormal: the widening of the low
                // and of the high half (read in place, docs/CODEGEN.md) where a driver's
                // conversion flushes denormals. (llvmpipe's does not; there the case
                // catches a wrong half: measured with the high-half helper reading .x.)
                attention_chunk(
                    F16,
                    F16,
                    Some(Fill::Bits { and: 0x83ff_83ff, or: 0 }),
                    "f16 K, f16 V all zero/subnormal, B=2 Hq=8 Hkv=2 D=128 P=16, mask",
                    0.0,
                    0.0,
                    64,
                ),
            ]
        }
        // GQA 4 (the decode shape's), 8 and 1; chunks of 64 (two tiles), 96, 256 and
        // 1024 tokens (one chunk per sequence: `finish` normalizes) with last tiles of
        // any length; with and without the mask (and sinks).
        "attn_decode_chunk_mma" => vec![
            attention_chunk_mma(8, 2, 1024, (1, 600), true),
            attention_chunk_mma(8, 2, 64, (1, 300), true),
            attention_chunk_mma(8, 2, 96, (200, 600), true),
            attention_chunk_mma(16, 2, 256, (1, 600), false),
            attention_chunk_mma(2, 2, 256, (100, 300), true),
        ],
        // GQA 4 with two blocks of 64 queries (the second partial) over caches of up to
        // 200 tokens; GQA 4/1 with one partial block.
        "attn_prefill_mma" => {
            vec![attention_prefill_mma(8, 2, 80, 200, true), attention_prefill_mma(4, 1, 20, 70, false), attention_prefill_mma(3, 1, 150, 300, true)]
        }
        "attn_decode_wide" => {
            use CacheFormat::*;
            use WideFormat::*;
            vec![
                // First, the smallest (CI's GPU-assisted pass takes it): MLA's mixed rows.
                attention_wide(Mixed(512), Mixed(448), 16, 1, 64, (1, 40), 0.0, 0.0, 4096),
                // Two head blocks (the second of 4 heads), two 128-token tiles per chunk.
                attention_wide(Fp8, Fp8, 20, 1, 256, (1, 300), 20.0, 8.0, 4096),
                // GQA 4: one partial head block per KV head; 512-token chunks.
                attention_wide(Plain(F16), Plain(Bf16), 8, 2, 512, (100, 300), 0.0, 0.0, 4096),
                attention_wide(Plain(Q8_0), Plain(Q4_0), 16, 1, 64, (1, 300), 0.0, 0.0, 150),
                attention_wide(Plain(F32), Fp8, 4, 1, 128, (1, 200), 0.0, 0.0, 4096),
            ]
        }
        "kv_fp8_encode" => [(7u32, 512u32, 448u32, 20.0f64), (5, 576, 576, 3000.0), (3, 128, 128, 1e-3)]
            .into_iter()
            .map(|(rows, dim, f8, range)| {
                Case::new(format!("{rows} rows x {dim}, {f8} E4M3 dims, |x| < {range}"), [rows, 1, 1])
                    .buffer("x", (rows * dim) as usize, Fill::Uniform { lo: -range, hi: range })
                    .buffer("rows", (rows * (4 + 2 * dim - f8) / 4) as usize, Fill::Zeros)
                    .scalar("n_rows", Literal::U32(rows))
                    .scalar("dim", Literal::U32(dim))
                    .scalar("fp8_dims", Literal::U32(f8))
            })
            .collect(),
        "turbo_score" => vec![
            turbo_score(0, 1, 1, 300, 2),
            turbo_score(1, 10, 2, 100, 1),
            turbo_score(0, 3, 3, 150, 3),
            turbo_score(1, 6, 2, 130, 2),
            // Odd rows × 2 KV heads: KV head 1 of the 66-byte layout starts mid-word.
            turbo_score(0, 2, 2, 129, 1),
        ],
        "qjl_score" => vec![qjl_score(0, 2, 2, 200, 1), qjl_score(0, 4, 2, 300, 2), qjl_score(0, 10, 2, 257, 1), qjl_score(1, 2, 1, 150, 1)],
        "qjl_get_rows" => vec![Case::new("40 rows", [40, 1, 1])
            .buffer("k", words(40 * 34), BLOCK_WORDS)
            .buffer("prj", 32768, Fill::Uniform { lo: -2.0, hi: 2.0 })
            .buffer("rows", 40 * 128, Fill::Zeros)],
        "polar_score" => {
            vec![polar_score(0, 1, 1, 1, 300, 3), polar_score(1, 0, 2, 1, 150, 1), polar_score(1, 1, 12, 3, 70, 2), polar_score(0, 1, 4, 2, 97, 2)]
        }
        "polar_get_rows" => vec![Case::new("30 rows, residual", [30, 1, 1])
            .buffer("k", words(30 * 82), BLOCK_WORDS)
            .buffer("centroids", 16, Fill::Uniform { lo: -3.0, hi: 3.0 })
            .buffer("psi", 128, Fill::Uniform { lo: -1.0, hi: 1.0 })
            .buffer("rows", 30 * 128, Fill::Zeros)
            .scalar("use_qjl", Literal::U32(1))],
        "fused_attn_qjl" => vec![fused(0, 0, 4, 2, 300, None), fused(1, 1, 2, 1, 200, Some(77)), fused(1, 0, 1, 1, 130, None)],
        "tbq_quantize" => [3u32, 4]
            .into_iter()
            .map(|bits| {
                let n = 100u32;
                Case::new(format!("tbq{bits}, {n} blocks"), [n.div_ceil(64), 1, 1])
                    .buffer("x", (n * 32) as usize, Fill::Uniform { lo: -3.0, hi: 3.0 })
                    .buffer("signs", 32, Fill::Uniform { lo: -1.0, hi: 1.0 })
                    .buffer("levels", if bits == 3 { 8 } else { 16 }, Fill::Uniform { lo: -2.5, hi: 2.5 })
                    .buffer("mids", if bits == 3 { 1 } else { 15 }, Fill::Uniform { lo: -2.5, hi: 2.5 })
                    .buffer("out", (n * if bits == 3 { 14 } else { 18 }) as usize, Fill::Zeros)
                    .scalar("n_blocks", Literal::U32(n))
                    .scalar("bits", Literal::U32(bits))
            })
            .collect(),
        "qjl_quantize" => vec![Case::new("12 keys", [12, 1, 1])
            .buffer("keys", 12 * 128, Fill::Uniform { lo: -2.0, hi: 2.0 })
            .buffer("prj", 32768, Fill::Uniform { lo: -2.0, hi: 2.0 })
            .buffer("out", 12 * 34, Fill::Zeros)],
        // One token and several; GQA 2 and no broadcast.
        "gated_delta_net" => vec![gated_delta_net(2, 1, 4, 2), gated_delta_net(3, 3, 2, 2)],
        // Decode, prefill with a partial workgroup of channels.
        "ssm_conv" => vec![ssm_conv(3, 1, 96), ssm_conv(2, 5, 200)],
        // Mamba-2 shaped (P 8, N 16, two groups) and Mamba-1 shaped (P 1, N 16), the
        // second with a partial workgroup.
        "ssm_scan" => vec![ssm_scan(3, 2, 4, 8, 16, 2), ssm_scan(2, 3, 100, 1, 16, 1)],
        "copy_rows" => vec![copy_rows()],
        // 5000 values in slices of 1024: a last, partial slice.
        "nvfp4_amax" => vec![Case::new("5000 values, slices of 1024", [5, 1, 1])
            .buffer("x", 5000, Fill::Uniform { lo: -100.0, hi: 100.0 })
            .buffer("part", 5, Fill::Zeros)
            .scalar("n", Literal::U32(5000))
            .scalar("per_group", Literal::U32(1024))],
        // The data's global scale over 300 blocks (a partial workgroup); a static scale
        // far too small for the data (every block scale saturates).
        "nvfp4_quantize" => [(false, 0.0f32, 100.0f64), (true, 0.000251, 8000.0)]
            .into_iter()
            .map(|(fixed, scale, range)| {
                Case::new(
                    if fixed { "300 blocks, static global scale 0.000251".to_string() } else { "300 blocks, global scale from the data".into() },
                    [3, 1, 1],
                )
                .buffer("x", 4800, Fill::Uniform { lo: -range, hi: range })
                .buffer("part", 4, Fill::Uniform { lo: 0.0, hi: range })
                .buffer("packed", 600, Fill::Zeros)
                .buffer("scales", 300, Fill::Zeros)
                .buffer("global", 1, Fill::Zeros)
                .scalar("n_blocks", Literal::U32(300))
                .scalar("n_parts", Literal::U32(4))
                .scalar("use_static", Literal::U32(fixed as u32))
                .scalar("static_global", Literal::f32(scale))
            })
            .collect(),
        "nvfp4_dequantize" => vec![Case::new("300 blocks", [19, 1, 1])
            .buffer("packed", 600, Fill::Bits { and: u32::MAX, or: 0 })
            .buffer("scales", 300, Fill::Ints { lo: 0, hi: 0x7e })
            .buffer("y", 4800, Fill::Zeros)
            .scalar("n_blocks", Literal::U32(300))
            .scalar("global", Literal::f32(0.0123))],
        // 1040 columns: 65 blocks, so invocations hold one block or none.
        "nvfp4_gemv_f32" | "nvfp4_gemv_bf16" => [(5u32, 1040u32), (3, 4096)]
            .into_iter()
            .map(|(rows, cols)| {
                Case::new(format!("{rows} rows x {cols}"), [rows, 1, 1])
                    .buffer("w_packed", (rows * cols / 8) as usize, Fill::Bits { and: u32::MAX, or: 0 })
                    .buffer("w_scales", (rows * cols / 16) as usize, Fill::Ints { lo: 0, hi: 0x7e })
                    .buffer("x", cols as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
                    .buffer("y", rows as usize, Fill::Zeros)
                    .scalar("n_rows", Literal::U32(rows))
                    .scalar("n_cols", Literal::U32(cols))
                    .scalar("w_global", Literal::f32(0.002))
            })
            .collect(),
        "nvfp4_gemv_nvfp4" => vec![Case::new("4 rows x 2048", [4, 1, 1])
            .buffer("w_packed", 1024, Fill::Bits { and: u32::MAX, or: 0 })
            .buffer("w_scales", 512, Fill::Ints { lo: 0, hi: 0x7e })
            .buffer("x_packed", 256, Fill::Bits { and: u32::MAX, or: 0 })
            .buffer("x_scales", 128, Fill::Ints { lo: 0, hi: 0x7e })
            .buffer("x_global", 1, Fill::Uniform { lo: 0.001, hi: 0.01 })
            .buffer("y", 4, Fill::Zeros)
            .scalar("n_rows", Literal::U32(4))
            .scalar("n_cols", Literal::U32(2048))
            .scalar("w_global", Literal::f32(0.002))],
        // E = 384, k = 6 (the routed model's shape); few experts with many picks; one
        // token over 1000 experts (eight per invocation) picking one.
        "moe_route" => [(3u32, 384u32, 6u32), (5, 64, 8), (1, 1000, 1)]
            .into_iter()
            .map(|(tokens, experts, k)| {
                Case::new(format!("{tokens} tokens, E {experts}, k {k}"), [tokens, 1, 1])
                    .buffer("logits", (tokens * experts) as usize, Fill::Uniform { lo: -6.0, hi: 6.0 })
                    .buffer("bias", experts as usize, Fill::Uniform { lo: -0.5, hi: 0.5 })
                    .buffer("experts", (tokens * k) as usize, Fill::Zeros)
                    .buffer("weights", (tokens * k) as usize, Fill::Zeros)
                    .scalar("n_experts", Literal::U32(experts))
                    .scalar("k", Literal::U32(k))
                    .scalar("routing_scale", Literal::f32(2.5))
            })
            .collect(),
        // 70 tokens: a second, partial workgroup; 20 rounds on one token.
        "sinkhorn" => [(70u32, 3u32), (1, 20)]
            .into_iter()
            .map(|(tokens, rounds)| {
                Case::new(format!("{tokens} tokens, {rounds} rounds"), [tokens.div_ceil(64), 1, 1])
                    .buffer("x", (tokens * 64) as usize, Fill::Uniform { lo: -3.0, hi: 3.0 })
                    .buffer("m", (tokens * 64) as usize, Fill::Zeros)
                    .scalar("n_tokens", Literal::U32(tokens))
                    .scalar("t_max", Literal::U32(rounds))
                    .scalar("eps", Literal::f32(1e-6))
            })
            .collect(),
        "rope_f32" | "rope_bf16" => [
            // (tokens, heads, head_dim, n_rot, offset, neox, inverse): whole heads NeoX;
            // the mixed rows' last 64 of 576 dims interleaved and inverse; an odd head count.
            (3u32, 4u32, 128u32, 128u32, 0u32, 1u32, 0u32),
            (2, 2, 576, 64, 512, 0, 1),
            (5, 3, 96, 32, 16, 1, 1),
        ]
        .into_iter()
        .map(|(tokens, heads, dim, rot, off, neox, inverse)| {
            let max_pos = 64u32;
            Case::new(
                format!(
                    "{tokens} tokens, {heads} heads, D {dim}, {rot} rotary dims at {off}, {}{}",
                    if neox == 1 { "NeoX" } else { "interleaved" },
                    if inverse == 1 { ", inverse" } else { "" }
                ),
                [(heads * dim).div_ceil(128), tokens, 1],
            )
            .buffer("x", (tokens * heads * dim) as usize, Fill::Uniform { lo: -4.0, hi: 4.0 })
            .buffer("pos", tokens as usize, Fill::Ints { lo: 0, hi: max_pos as i64 - 1 })
            .buffer("cos", (max_pos * rot / 2) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
            .buffer("sin", (max_pos * rot / 2) as usize, Fill::Uniform { lo: -1.0, hi: 1.0 })
            .buffer("y", (tokens * heads * dim) as usize, Fill::Zeros)
            .scalar("n_tokens", Literal::U32(tokens))
            .scalar("n_heads", Literal::U32(heads))
            .scalar("head_dim", Literal::U32(dim))
            .scalar("n_rot", Literal::U32(rot))
            .scalar("rot_offset", Literal::U32(off))
            .scalar("max_pos", Literal::U32(max_pos))
            .scalar("neox", Literal::U32(neox))
            .scalar("inverse", Literal::U32(inverse))
        })
        .collect(),
        // Every pattern, nine iterations (the places along the rows wrap), f16 values
        // in ±[1/2, 1).
        "tile_probe" => (0..7u32)
            .map(|mode| {
                Case::new(format!("2 workgroups, 9 iterations of pattern {mode}"), [2, 1, 1])
                    .buffer("src", 4352, Fill::Bits { and: 0x83ff_83ff, or: 0x3800_3800 })
                    .buffer("out", 2048, Fill::Zeros)
                    .scalar("iters", Literal::U32(9))
                    .scalar("mode", Literal::U32(mode))
            })
            .collect(),
        "copy_words" => vec![Case::new("5000 words", [5, 1, 1])
            .buffer("src", 5000, Fill::Ints { lo: 0, hi: u32::MAX as i64 })
            .buffer("dst", 5000, Fill::Zeros)
            .scalar("n", Literal::U32(5000))],
        // Words of 0 and 1: about half of the invocations XOR to 1 (every one of them
        // writes the same value, so the result is deterministic), none to 2; 5000 words
        // end inside a workgroup.
        "read_words" => [(1, "some invocations match"), (2, "none match")]
            .into_iter()
            .map(|(tag, what)| {
                Case::new(format!("5000 words, tag {tag}: {what}"), [5, 1, 1])
                    .buffer("words", 5000, Fill::Ints { lo: 0, hi: 1 })
                    .buffer("hits", 1, Fill::Zeros)
                    .scalar("n", Literal::U32(5000))
                    .scalar("tag", Literal::U32(tag))
            })
            .collect(),
        _ => return None,
    })
}
