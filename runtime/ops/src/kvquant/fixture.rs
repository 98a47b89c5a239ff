//! Fixtures in the elizaOS schema (FORMATS.md §7): the `kernel` field names turbo3,
//! turbo4, turbo3_tcq, qjl, polar, polar_preht, fused_attn_qjl_tbq or
//! fused_attn_qjl_polar. Each runs the matching DSL kernel on a backend and is compared
//! with the file's expected values: pass when every |Δ| ≤ the file's tolerance (1e-3
//! when it states none). A file whose layout this runner does not know is an error.

use super::ops::TurboFormat;
use crate::json::{field_u32, flat};
use crate::Device;
use serde_json::Value;

/// The comparison of one fixture on one backend.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ElizaResult {
    /// Backend name.
    pub backend: String,
    /// The fixture's `kernel`.
    pub kernel: String,
    /// Values compared.
    pub compared: usize,
    /// Largest |out − expected|.
    pub max_abs: f64,
    /// The bound on it.
    pub tolerance: f64,
    /// Every value within the bound.
    pub passed: bool,
}

fn floats(v: &Value, k: &str, n: usize) -> Result<Vec<f32>, String> {
    let x: Vec<f32> = flat(&v[k]).iter().map(|&x| x as f32).collect();
    if x.len() != n {
        return Err(format!("`{k}` holds {} values, expected {n}", x.len()));
    }
    Ok(x)
}

/// A byte field, checked to hold `n` bytes.
fn block_bytes(v: &Value, k: &str, n: usize) -> Result<Vec<u8>, String> {
    let vals = flat(&v[k]);
    if vals.len() != n {
        return Err(format!("`{k}` holds {} bytes, expected {n}", vals.len()));
    }
    if let Some(bad) = vals.iter().find(|&&x| !(0.0..=255.0).contains(&x) || x.fract() != 0.0) {
        return Err(format!("`{k}` holds {bad}, not a byte"));
    }
    Ok(vals.iter().map(|&x| x as u8).collect())
}

fn turbo(dev: &mut Device, fx: &Value, format: TurboFormat, real_domain: bool) -> Result<Vec<f32>, String> {
    let n_kv = field_u32(fx, "n_kv")? as usize;
    let row = format.row_bytes();
    let bpk = fx["blocks_per_kv"].as_u64().unwrap_or(1) as usize;
    let bb = field_u32(fx, "block_bytes")? as usize;
    if bb * bpk != row {
        return Err(format!("{} bytes per row ({bb} × {bpk}), the format has {row}", bb * bpk));
    }
    dev.turbo_scores(format, real_domain, &floats(fx, "q", 128)?, &block_bytes(fx, "k_blocks", n_kv * row)?, 1).map_err(|e| e.to_string())
}

fn qjl(dev: &mut Device, fx: &Value) -> Result<Vec<f32>, String> {
    let (hq, hkv, n) = (field_u32(fx, "n_heads")?, field_u32(fx, "n_kv_heads")?, field_u32(fx, "n_tokens")?);
    let keys = block_bytes(fx, "k_blocks", (hkv * n * 34) as usize)?;
    dev.qjl_scores(&floats(fx, "q_sketch", (hq * 256) as usize)?, None, &keys, hq, hkv).map_err(|e| e.to_string())
}

fn polar(dev: &mut Device, fx: &Value, q: &str, blocks: &str, use_qjl: bool, preht: bool) -> Result<Vec<f32>, String> {
    let n = field_u32(fx, "n_rows")? as usize;
    dev.polar_scores(&floats(fx, q, 128)?, &block_bytes(fx, blocks, n * 82)?, 1, use_qjl, preht).map_err(|e| e.to_string())
}

fn fused(dev: &mut Device, fx: &Value, case: &Value, polar: bool) -> Result<Vec<f32>, String> {
    let (hq, hkv, n) = (field_u32(case, "n_heads")?, field_u32(case, "n_kv_heads")?, field_u32(case, "n_kv")?);
    let vb = if polar { 82 } else { 56 };
    let (declared, per) = (fx["v_block_bytes"].as_u64().unwrap_or(0) as usize, fx["v_blocks_per_token"].as_u64().unwrap_or(1) as usize);
    if declared * per != vb {
        return Err(format!("V blocks of {declared} × {per} bytes per token; the format has {vb}"));
    }
    let flag = |v: &Value| v.as_u64().or(v.as_bool().map(u64::from));
    let use_qjl = flag(&case["use_qjl"]).or(flag(&fx["use_qjl"])).or(flag(&fx["v_use_qjl"])).unwrap_or(0) != 0;
    let causal = flag(&case["causal"]).unwrap_or(0) != 0;
    let q_pos = case["q_pos_base"].as_u64().unwrap_or(0) as u32 + case["q_pos"].as_u64().unwrap_or(0) as u32;
    let sm_scale = fx["sm_scale"].as_f64().ok_or("missing field `sm_scale`")? as f32;
    let keys = block_bytes(case, "k_blocks", (hkv * n * 34) as usize)?;
    let values = block_bytes(case, "v_blocks", (hkv * n) as usize * vb)?;
    let q = floats(case, "q_sketch", (hq * 256) as usize)?;
    dev.fused_attention(&q, &keys, &values, polar.then_some(use_qjl), hq, hkv, sm_scale, causal.then_some(q_pos)).map_err(|e| e.to_string())
}

/// Whether the fixture's TBQ score is real-domain (a `score_domain` / `domain` field of
/// `"real"`); the eliza reference generator scores in the rotated domain.
fn real_domain(fx: &Value) -> Result<bool, String> {
    match fx["score_domain"].as_str().or(fx["domain"].as_str()) {
        None | Some("rotated") => Ok(false),
        Some("real") => Ok(true),
        Some(other) => Err(format!("unknown score domain `{other}` (rotated or real)")),
    }
}

/// Runs one fixture of the elizaOS schema on `dev`.
pub fn run_eliza(fx: &Value, dev: &mut Device) -> Result<ElizaResult, String> {
    let kernel = fx["kernel"].as_str().ok_or("not a fixture: no `kernel` field")?.to_string();
    if fx["head_dim"].as_u64().is_some_and(|d| d != 128) {
        return Err(format!("head_dim {} — these formats are defined for 128", fx["head_dim"]));
    }
    let name = dev.backend().name().to_string();
    let r = dev;
    let bytes = fx["block_bytes"].as_u64().unwrap_or(0);
    let mut pairs: Vec<(Vec<f32>, Vec<f64>)> = Vec::new();
    match kernel.as_str() {
        "turbo3" | "tbq3" => {
            // Both layouts are 14-byte blocks: the name (or a `layout` field) decides.
            let tbq = kernel == "tbq3" || fx["layout"].as_str() == Some("block_tbq3_0");
            if bytes != 14 {
                return Err(format!("turbo3 with {bytes}-byte blocks; known: 14 (block_turbo3_0 / block_tbq3_0)"));
            }
            let domain = if tbq { real_domain(fx)? } else { false };
            pairs.push((turbo(r, fx, if tbq { TurboFormat::Tbq3 } else { TurboFormat::Turbo3 }, domain)?, flat(&fx["expected_scores"])));
        }
        "turbo4" | "tbq4" => {
            let format = match (bytes, fx["blocks_per_kv"].as_u64().unwrap_or(1)) {
                (66, 1) => TurboFormat::Turbo4Legacy,
                (18, 4) | (72, 1) => TurboFormat::Tbq4,
                other => return Err(format!("turbo4 with {} × {}-byte blocks; known: 66 B legacy, 4 × 18 B block_tbq4_0", other.1, other.0)),
            };
            let domain = if format == TurboFormat::Tbq4 { real_domain(fx)? } else { false };
            pairs.push((turbo(r, fx, format, domain)?, flat(&fx["expected_scores"])));
        }
        "turbo3_tcq" => pairs.push((turbo(r, fx, TurboFormat::Tcq, false)?, flat(&fx["expected_scores"]))),
        "qjl" => pairs.push((qjl(r, fx)?, flat(&fx["expected_scores"]))),
        "polar" => {
            let use_qjl = fx["use_qjl"].as_u64().or(fx["use_qjl"].as_bool().map(u64::from)).unwrap_or(0) != 0;
            pairs.push((polar(r, fx, "q", "k_blocks", use_qjl, false)?, flat(&fx["expected_scores"])));
        }
        "polar_preht" => {
            pairs.push((polar(r, fx, "hq", "k_blocks", false, true)?, flat(&fx["expected_scores"])));
            if !fx["k_blocks_qjl"].is_null() {
                pairs.push((polar(r, fx, "hq", "k_blocks_qjl", true, true)?, flat(&fx["expected_scores_qjl"])));
            }
        }
        "fused_attn_qjl_tbq" | "fused_attn_qjl_polar" => {
            let cases = fx["cases"].as_array().ok_or("missing `cases`")?;
            if cases.is_empty() {
                return Err("`cases` is empty".into());
            }
            for (i, c) in cases.iter().enumerate() {
                let out = fused(r, fx, c, kernel.ends_with("polar")).map_err(|e| format!("case {i}: {e}"))?;
                pairs.push((out, flat(&c["expected_out"])));
            }
        }
        other => return Err(format!("fixture kernel `{other}` is not supported (turbo3, turbo4, turbo3_tcq, qjl, polar, polar_preht, fused_attn_qjl_tbq, fused_attn_qjl_polar)")),
    }
    let mut max_abs = 0.0f64;
    let mut compared = 0;
    for (got, want) in &pairs {
        if got.len() != want.len() || want.is_empty() {
            return Err(format!("the kernel produced {} values, the fixture expects {}", got.len(), want.len()));
        }
        for (g, w) in got.iter().zip(want) {
            let d = (*g as f64 - w).abs();
            max_abs = if d.is_nan() { f64::INFINITY } else { max_abs.max(d) };
        }
        compared += want.len();
    }
    let tolerance = fx["tolerance"].as_f64().or(fx["tolerance"]["max_abs"].as_f64()).unwrap_or(1e-3);
    Ok(ElizaResult { backend: name, kernel, compared, max_abs, tolerance, passed: max_abs <= tolerance })
}
