//! Fixtures in the linear-attention schema (`tests/fixtures/gdn/README.md`):
//! `gated_delta_net` and `ssm_conv` files run on any backend and compared with their
//! float64 references within each file's tolerance, output and state each.

use super::{ConvInputs, GdnInputs};
use crate::attention::reference::compare;
use crate::fixture::FixtureResult;
use crate::json::{field_u32, flat};
use crate::Device;
use serde_json::Value;

fn floats(fx: &Value, k: &str) -> Result<Vec<f32>, String> {
    match &fx[k] {
        Value::Array(_) => Ok(flat(&fx[k]).iter().map(|&x| x as f32).collect()),
        Value::Null => Err(format!("missing field `{k}`")),
        _ => Err(format!("field `{k}` is not an array of numbers")),
    }
}

fn flag(fx: &Value, k: &str) -> Result<bool, String> {
    match &fx[k] {
        Value::Bool(b) => Ok(*b),
        Value::Null => Ok(false),
        _ => Err(format!("field `{k}` is not a boolean")),
    }
}

/// The gated-delta-net call a fixture describes, and its initial states.
pub fn gdn_inputs(fx: &Value) -> Result<(GdnInputs, Vec<f32>), String> {
    let x = GdnInputs {
        s_v: field_u32(fx, "s_v")?,
        n_heads: field_u32(fx, "n_heads")?,
        n_k_heads: field_u32(fx, "n_k_heads")?,
        n_tokens: field_u32(fx, "n_tokens")?,
        n_seqs: field_u32(fx, "n_seqs")?,
        kda: flag(fx, "kda")?,
        q: floats(fx, "q")?,
        k: floats(fx, "k")?,
        v: floats(fx, "v")?,
        g: floats(fx, "g")?,
        beta: floats(fx, "beta")?,
        raw_gates: None,
    };
    x.check().map_err(|e| e.to_string())?;
    Ok((x, floats(fx, "state")?))
}

/// The convolution a fixture describes, and its window `x`.
pub fn conv_inputs(fx: &Value) -> Result<(ConvInputs, Vec<f32>), String> {
    let c = ConvInputs {
        d_conv: field_u32(fx, "d_conv")?,
        channels: field_u32(fx, "channels")?,
        n_tokens: field_u32(fx, "n_tokens")?,
        n_seqs: field_u32(fx, "n_seqs")?,
        silu: flag(fx, "silu")?,
        weight: floats(fx, "weight")?,
    };
    c.check().map_err(|e| e.to_string())?;
    Ok((c, floats(fx, "x")?))
}

/// Compares `got` with the file's `field` (the same number of values required).
fn against(fx: &Value, field: &str, got: &[f32]) -> Result<(f64, f64), String> {
    let want = flat(&fx[field]);
    if fx[field].is_null() {
        return Err(format!("missing field `{field}`"));
    }
    if want.len() != got.len() {
        return Err(format!("`{field}` has {} values, the kernel produced {}", want.len(), got.len()));
    }
    Ok(compare(got, &want))
}

/// Runs one `gated_delta_net` or `ssm_conv` fixture on `dev`.
pub fn run_linear(fx: &Value, dev: &mut Device) -> Result<FixtureResult, String> {
    let mut checks = Vec::new();
    match fx["kernel"].as_str() {
        Some("gated_delta_net") => {
            let (x, state) = gdn_inputs(fx)?;
            let r = dev.gated_delta_net(&x, &state).map_err(|e| e.to_string())?;
            checks.push(against(fx, "expected_out", &r.out)?);
            checks.push(against(fx, "expected_state", &r.state.unwrap_or_default())?);
        }
        Some("ssm_conv") => {
            let (c, x) = conv_inputs(fx)?;
            let out = dev.ssm_conv(&c, &x).map_err(|e| e.to_string())?;
            checks.push(against(fx, "expected_out", &out)?);
        }
        Some(other) => return Err(format!("fixture kernel `{other}` is not a linear-attention kernel")),
        None => return Err("not a linear-attention fixture: no `kernel` field".into()),
    }
    let nmse_bound = fx["tolerance"]["nmse"].as_f64().ok_or("missing field `tolerance.nmse`")?;
    let max_abs_bound = fx["tolerance"]["max_abs"].as_f64().ok_or("missing field `tolerance.max_abs`")?;
    let nmse = checks.iter().map(|c| c.0).fold(0.0, f64::max);
    let max_abs = checks.iter().map(|c| c.1).fold(0.0, f64::max);
    Ok(FixtureResult {
        backend: dev.backend().name().to_string(),
        nmse,
        max_abs,
        nmse_bound,
        max_abs_bound,
        cosine: None,
        cosine_bound: None,
        passed: checks.iter().all(|&(n, m)| n <= nmse_bound && m <= max_abs_bound),
    })
}
