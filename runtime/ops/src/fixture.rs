//! External fixtures in the attention schema (`tests/fixtures/attention/README.md`):
//! run the decode-attention kernels (chunk, then combine, deterministic mode) on any
//! backend from the manifest, and compare with the file's float64 reference within the
//! file's tolerance. A fixture this runner cannot execute is an error, never a pass.

use crate::attention::reference::compare;
use crate::attention::{AttentionError, DecodeProblem, KvFormat, PrefillProblem, RowLayout, Split, TiledBlocks};
use crate::json::{field_u32, flat};
use crate::Device;
use serde_json::Value;

/// The comparison of one fixture on one backend.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FixtureResult {
    /// Backend name.
    pub backend: String,
    /// Σ(out − ref)² / Σ ref².
    pub nmse: f64,
    /// Largest |out − ref|.
    pub max_abs: f64,
    /// The file's bounds.
    pub nmse_bound: f64,
    /// The file's bound on |out − ref|.
    pub max_abs_bound: f64,
    /// Cosine similarity of the flattened output with the reference (attention
    /// fixtures).
    pub cosine: Option<f64>,
    /// The file's lower bound on the cosine, where it states one.
    pub cosine_bound: Option<f64>,
    /// Every bound met.
    pub passed: bool,
}

/// The cosine similarity of `out` with `want` (1 where both are zero).
pub fn cosine(out: &[f32], want: &[f64]) -> f64 {
    let (mut dot, mut a2, mut b2) = (0.0f64, 0.0f64, 0.0f64);
    for (o, w) in out.iter().zip(want) {
        dot += *o as f64 * w;
        a2 += (*o as f64) * (*o as f64);
        b2 += w * w;
    }
    if a2 == 0.0 && b2 == 0.0 {
        1.0
    } else {
        dot / (a2.sqrt() * b2.sqrt())
    }
}

fn field_f32(fx: &Value, k: &str) -> Result<f32, String> {
    fx[k].as_f64().map(|v| v as f32).ok_or_else(|| format!("missing or non-numeric field `{k}`"))
}

fn kv_format(fx: &Value, k: &str) -> Result<KvFormat, String> {
    let fp8_dims = match &fx["fp8_dims"] {
        Value::Null => None,
        v => Some(v.as_u64().and_then(|x| u32::try_from(x).ok()).ok_or("`fp8_dims` is not a non-negative integer")?),
    };
    match fx[k].as_str() {
        Some("fp8_mixed") if fp8_dims.is_none() => Err(format!("`{k}` = `fp8_mixed` needs the field `fp8_dims`")),
        Some(name) => KvFormat::parse(name, fp8_dims).ok_or_else(|| {
            format!("`{k}` = `{name}` is not supported (decode attention runs f32, f16, bf16, q8_0, q4_0, fp8_e4m3 and fp8_mixed caches)")
        }),
        None => Err(format!("missing field `{k}`")),
    }
}

/// The fields both attention schemas share, unchecked: the cache, shapes, options and
/// the file's `q` as it is (one query per sequence for decode, T for prefill).
fn attention_fields(fx: &Value) -> Result<DecodeProblem, String> {
    let floats = |k: &str| -> Option<Vec<f32>> { (!fx[k].is_null()).then(|| flat(&fx[k]).iter().map(|&x| x as f32).collect()) };
    let bytes = |k: &str| -> Vec<u8> { flat(&fx[k]).iter().map(|&x| x as u8).collect() };
    let p = DecodeProblem {
        head_dim: field_u32(fx, "head_dim")?,
        n_heads: field_u32(fx, "n_heads")?,
        n_kv_heads: field_u32(fx, "n_kv_heads")?,
        page_size: field_u32(fx, "page_size")?,
        pages_per_seq: field_u32(fx, "pages_per_seq")?,
        kv_len: flat(&fx["kv_len"]).iter().map(|&x| x as u32).collect(),
        k_format: kv_format(fx, "k_type")?,
        v_format: kv_format(fx, "v_type")?,
        k: bytes("k"),
        v: bytes("v"),
        block_table: (!fx["block_table"].is_null()).then(|| flat(&fx["block_table"]).iter().map(|&x| x as i32).collect()),
        q: floats("q").ok_or("missing field `q`")?,
        scale: field_f32(fx, "scale")?,
        softcap: fx["logit_softcap"].as_f64().unwrap_or(0.0) as f32,
        max_bias: fx["max_bias"].as_f64().unwrap_or(0.0) as f32,
        mask: floats("mask"),
        sinks: floats("sinks"),
        v_head_dim: None,
    };
    let n_seq = field_u32(fx, "n_seq")?;
    if p.n_seq() != n_seq {
        return Err(format!("`kv_len` holds {} lengths, `n_seq` is {n_seq}", p.n_seq()));
    }
    Ok(p)
}

/// `n_pages` is redundant with K's size: a file where they disagree is inconsistent.
fn check_n_pages(fx: &Value, pages_in_k: usize) -> Result<(), String> {
    let n_pages = field_u32(fx, "n_pages")?;
    if n_pages as usize != pages_in_k {
        return Err(format!("`n_pages` is {n_pages}, but `k` holds {pages_in_k} pages"));
    }
    Ok(())
}

/// The decode problem a `flash_attn_decode` fixture describes, checked.
pub fn attention_problem(fx: &Value) -> Result<DecodeProblem, String> {
    match fx["kernel"].as_str() {
        Some("flash_attn_decode") => {}
        Some(other) => return Err(format!("fixture kernel `{other}` is not supported by this runner")),
        None => return Err("not an attention fixture: no `kernel` field".into()),
    }
    let p = attention_fields(fx)?;
    p.check().map_err(|e| e.to_string())?;
    check_n_pages(fx, p.n_pages())?;
    Ok(p)
}

/// The prefill step a `flash_attn_prefill` fixture describes: `n_query_tokens` (T)
/// queries per sequence, `q[B][T][Hq][D]`, the output `[B][T][Hq][D]`.
pub fn prefill_problem(fx: &Value) -> Result<PrefillProblem, String> {
    if fx["kernel"].as_str() != Some("flash_attn_prefill") {
        return Err("not a prefill fixture: `kernel` is not `flash_attn_prefill`".into());
    }
    let d = attention_fields(fx)?;
    let t = field_u32(fx, "n_query_tokens")?;
    let p = PrefillProblem {
        head_dim: d.head_dim,
        n_heads: d.n_heads,
        n_kv_heads: d.n_kv_heads,
        page_size: d.page_size,
        pages_per_seq: d.pages_per_seq,
        q_tokens: vec![t; d.kv_len.len()],
        kv_len: d.kv_len,
        k_format: d.k_format,
        v_format: d.v_format,
        k: d.k,
        v: d.v,
        block_table: d.block_table,
        q: d.q,
        q_layout: RowLayout::dense(d.n_heads, d.head_dim),
        out_layout: RowLayout::dense(d.n_heads, d.head_dim),
        scale: d.scale,
        softcap: d.softcap,
        max_bias: d.max_bias,
        mask: d.mask,
        sinks: d.sinks,
        v_head_dim: None,
    };
    p.check_cache().map_err(|e| e.to_string())?;
    check_n_pages(fx, p.n_pages())?;
    Ok(p)
}

/// Runs one attention fixture (`flash_attn_decode` or `flash_attn_prefill`, deterministic
/// mode) on `dev`.
pub fn run_attention(fx: &Value, dev: &mut Device) -> Result<FixtureResult, String> {
    let out = if fx["kernel"].as_str() == Some("flash_attn_prefill") {
        prefill_problem(fx)?.run(Split::Deterministic, dev).map_err(|e| e.to_string())?
    } else {
        attention_problem(fx)?.run(Split::Deterministic, dev).map_err(|e| e.to_string())?
    };
    judge(fx, &out, dev)
}

/// A `flash_attn_prefill` fixture in the fast mode, or why the device cannot run it.
#[derive(Clone, Debug)]
pub enum FastOutcome {
    /// The comparison.
    Ran(FixtureResult),
    /// The device lacks what `attn_prefill_mma` needs (register tiles, shared memory):
    /// the backend's reason. Not a pass.
    Unsupported(String),
}

/// Runs one `flash_attn_prefill` fixture in the fast mode (`attn_prefill_mma` on tensor
/// cores, the device's block form) on `dev`; a step the mode cannot take (not f16, not
/// D = 128, softcap, ALiBi) is an error naming why.
pub fn run_prefill_tensor_cores(fx: &Value, dev: &mut Device) -> Result<FastOutcome, String> {
    let p = prefill_problem(fx)?;
    match p.run_tensor_cores(TiledBlocks::for_device(dev), dev) {
        Ok(out) => judge(fx, &out, dev).map(FastOutcome::Ran),
        Err(AttentionError::Backend(onekernel_runtime::BackendError::Unsupported { reason, .. })) => Ok(FastOutcome::Unsupported(reason)),
        Err(e) => Err(e.to_string()),
    }
}

/// `out` against the fixture's `expected_out` within its tolerance.
fn judge(fx: &Value, out: &[f32], dev: &Device) -> Result<FixtureResult, String> {
    let want = flat(&fx["expected_out"]);
    if want.len() != out.len() {
        return Err(format!("`expected_out` has {} values, the kernel produced {}", want.len(), out.len()));
    }
    let (nmse, max_abs) = compare(out, &want);
    let nmse_bound = fx["tolerance"]["nmse"].as_f64().ok_or("missing or non-numeric field `tolerance.nmse`")?;
    let max_abs_bound = fx["tolerance"]["max_abs"].as_f64().ok_or("missing or non-numeric field `tolerance.max_abs`")?;
    let cosine_bound = match &fx["tolerance"]["cosine"] {
        Value::Null => None,
        v => Some(v.as_f64().ok_or("non-numeric field `tolerance.cosine`")?),
    };
    let cos = cosine(out, &want);
    Ok(FixtureResult {
        backend: dev.backend().name().to_string(),
        nmse,
        max_abs,
        nmse_bound,
        max_abs_bound,
        cosine: Some(cos),
        cosine_bound,
        passed: nmse <= nmse_bound && max_abs <= max_abs_bound && cosine_bound.is_none_or(|c| cos >= c),
    })
}
