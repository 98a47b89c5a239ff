//! External fixtures in the attention schema (`../shared/fixtures/attention/README.md`):
//! run the decode-attention kernels (chunk, then combine, deterministic mode) on any
//! backend from the manifest, and compare with the file's float64 reference within the
//! file's tolerance. A fixture this runner cannot execute is an error, never a pass.

use crate::args::Args;
use crate::backend::{Backend, Launch};
use crate::buffer::HostBuffer;
use onekernel_dsl::manifest::Manifest;
use onekernel_dsl::types::{Literal, StorageType};
use serde_json::Value;
use std::path::Path;

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
    /// Both bounds met.
    pub passed: bool,
}

fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap_or(f64::NAN)],
        _ => vec![],
    }
}

fn field_u32(fx: &Value, k: &str) -> Result<u32, String> {
    fx[k].as_u64().map(|v| v as u32).ok_or_else(|| format!("missing or non-integer field `{k}`"))
}

fn field_f32(fx: &Value, k: &str) -> Result<f32, String> {
    fx[k].as_f64().map(|v| v as f32).ok_or_else(|| format!("missing or non-numeric field `{k}`"))
}

/// A cache element type: a storage type, or a ggml block format (`q8_0` = 0, `q4_0` = 1).
#[derive(Clone, Copy, PartialEq)]
enum KvType {
    Plain(StorageType),
    Quant(u32),
}

fn kv_type(fx: &Value, k: &str) -> Result<KvType, String> {
    match fx[k].as_str() {
        Some("f32") => Ok(KvType::Plain(StorageType::F32)),
        Some("f16") => Ok(KvType::Plain(StorageType::F16)),
        Some("bf16") => Ok(KvType::Plain(StorageType::Bf16)),
        Some("q8_0") => Ok(KvType::Quant(0)),
        Some("q4_0") => Ok(KvType::Quant(1)),
        Some(other) => Err(format!("`{k}` = `{other}` is not supported yet (decode attention runs f32, f16, bf16, q8_0 and q4_0 caches)")),
        None => Err(format!("missing field `{k}`")),
    }
}

/// Spec values of a manifest variant whose axes match `axes`, with `head_dim` replaced.
fn spec(m: &onekernel_dsl::manifest::KernelManifest, axes: &[(&str, Literal)], head_dim: u32) -> Result<Vec<(String, Literal)>, String> {
    let v = m
        .variants
        .iter()
        .find(|v| axes.iter().all(|(n, want)| v.spec.iter().any(|(name, val)| name == n && val == want)))
        .ok_or_else(|| format!("kernel `{}` has no variant {axes:?}", m.name))?;
    Ok(v.spec.iter().map(|(n, val)| if n == "head_dim" { (n.clone(), Literal::U32(head_dim)) } else { (n.clone(), *val) }).collect())
}

/// Runs one attention fixture on `backend`.
pub fn run_attention(fx: &Value, backend: &mut dyn Backend, manifest: &Manifest, artifacts: &Path) -> Result<FixtureResult, String> {
    match fx["kernel"].as_str() {
        Some("flash_attn_decode") => {}
        Some(other) => return Err(format!("fixture kernel `{other}` is not supported by this runner")),
        None => return Err("not an attention fixture: no `kernel` field".into()),
    }
    let (kt, vt) = (kv_type(fx, "k_type")?, kv_type(fx, "v_type")?);
    let d = field_u32(fx, "head_dim")?;
    let (hq, hkv, b, p, pps) = (field_u32(fx, "n_heads")?, field_u32(fx, "n_kv_heads")?, field_u32(fx, "n_seq")?, field_u32(fx, "page_size")?, field_u32(fx, "pages_per_seq")?);
    let kv_len: Vec<u32> = flat(&fx["kv_len"]).iter().map(|&x| x as u32).collect();
    if kv_len.len() != b as usize || kv_len.contains(&0) {
        return Err(format!("`kv_len` must hold {b} lengths ≥ 1"));
    }
    let n_chunks = kv_len.iter().max().copied().unwrap_or(1).div_ceil(256);
    let bytes = |k: &str| -> Vec<u8> { flat(&fx[k]).iter().map(|&x| x as u8).collect() };
    let paged = !fx["block_table"].is_null();
    let table: Vec<i32> = if paged { flat(&fx["block_table"]).iter().map(|&x| x as i32).collect() } else { vec![0] };
    let has_mask = !fx["mask"].is_null();
    let mask = if has_mask {
        HostBuffer::f16_from_f32(&flat(&fx["mask"]).iter().map(|&x| x as f32).collect::<Vec<_>>())
    } else {
        HostBuffer::zeros(StorageType::F16, 1)
    };
    let has_sinks = !fx["sinks"].is_null();
    let sinks: Vec<f32> = if has_sinks { flat(&fx["sinks"]).iter().map(|&x| x as f32).collect() } else { vec![0.0] };
    let q: Vec<f32> = flat(&fx["q"]).iter().map(|&x| x as f32).collect();
    let parts = (b * hq * n_chunks) as usize;
    let (chunk_name, k_elem, v_elem, mut axes) = match (kt, vt) {
        (KvType::Plain(k), KvType::Plain(v)) => (format!("attn_decode_chunk_{}_{}", k.name(), v.name()), k, v, vec![]),
        (KvType::Quant(k), KvType::Quant(v)) => ("attn_decode_chunk_q".to_string(), StorageType::U8, StorageType::U8, vec![("kq", Literal::U32(k)), ("vq", Literal::U32(v))]),
        _ => return Err("a quantized cache with a plain one (mixed K/V formats) is not supported yet".into()),
    };
    let chunk = manifest.kernel(&chunk_name).ok_or_else(|| format!("`{chunk_name}` is not in the manifest"))?;
    let combine = manifest.kernel("attn_decode_combine").ok_or("`attn_decode_combine` is not in the manifest")?;
    let mut a = Args::new()
        .buffer("q", HostBuffer::from_f32(&q))
        .buffer("k", HostBuffer::from_bytes(k_elem, bytes("k")).ok_or("`k` is not a whole number of elements")?)
        .buffer("v", HostBuffer::from_bytes(v_elem, bytes("v")).ok_or("`v` is not a whole number of elements")?)
        .buffer("block_table", HostBuffer::from_i32(&table))
        .buffer("kv_len", HostBuffer::from_u32(&kv_len))
        .buffer("mask", mask)
        .buffer("part_m", HostBuffer::zeros(StorageType::F32, parts))
        .buffer("part_l", HostBuffer::zeros(StorageType::F32, parts))
        .buffer("part_acc", HostBuffer::zeros(StorageType::F32, parts * d as usize))
        .scalar("n_heads", hq)
        .scalar("n_kv_heads", hkv)
        .scalar("page_size", p)
        .scalar("pages_per_seq", pps)
        .scalar("n_chunks", n_chunks)
        .scalar("chunk_tokens", 256u32)
        .scalar("scale", field_f32(fx, "scale")?)
        .scalar("softcap", fx["logit_softcap"].as_f64().unwrap_or(0.0) as f32)
        .scalar("max_bias", fx["max_bias"].as_f64().unwrap_or(0.0) as f32)
        .scalar("has_mask", has_mask as u32);
    axes.extend([("paged", Literal::Bool(paged)), ("deterministic", Literal::Bool(true))]);
    let chunk_spec = spec(chunk, &axes, d)?;
    backend
        .launch(&Launch { kernel: chunk, artifacts, spec: &chunk_spec, groups: [n_chunks, hq, b] }, &mut a)
        .map_err(|e| e.to_string())?;
    let take = |name: &str| a.get_buffer(name).cloned().ok_or_else(|| format!("no `{name}`"));
    let mut c = Args::new()
        .buffer("part_m", take("part_m")?)
        .buffer("part_l", take("part_l")?)
        .buffer("part_acc", take("part_acc")?)
        .buffer("kv_len", HostBuffer::from_u32(&kv_len))
        .buffer("sinks", HostBuffer::from_f32(&sinks))
        .buffer("out", HostBuffer::zeros(StorageType::F32, (b * hq * d) as usize))
        .scalar("n_heads", hq)
        .scalar("n_chunks", n_chunks)
        .scalar("chunk_tokens", 256u32)
        .scalar("has_sinks", has_sinks as u32);
    let combine_spec = spec(combine, &[("deterministic", Literal::Bool(true))], d)?;
    backend
        .launch(&Launch { kernel: combine, artifacts, spec: &combine_spec, groups: [hq, b, 1] }, &mut c)
        .map_err(|e| e.to_string())?;
    let out = c.get_buffer("out").ok_or("no `out`")?.to_f32();
    let want = flat(&fx["expected_out"]);
    if want.len() != out.len() {
        return Err(format!("`expected_out` has {} values, the kernel produced {}", want.len(), out.len()));
    }
    let (mut err2, mut ref2, mut max_abs) = (0.0f64, 0.0f64, 0.0f64);
    for (o, w) in out.iter().zip(&want) {
        let e = *o as f64 - w;
        err2 += e * e;
        ref2 += w * w;
        max_abs = max_abs.max(e.abs());
    }
    let nmse = if ref2 > 0.0 { err2 / ref2 } else { err2 };
    let nmse_bound = fx["tolerance"]["nmse"].as_f64().unwrap_or(1e-6);
    let max_abs_bound = fx["tolerance"]["max_abs"].as_f64().unwrap_or(1e-3);
    Ok(FixtureResult { backend: backend.name().to_string(), nmse, max_abs, nmse_bound, max_abs_bound, passed: nmse <= nmse_bound && max_abs <= max_abs_bound })
}
