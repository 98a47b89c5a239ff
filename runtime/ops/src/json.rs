//! Reading fixture JSON: nested arrays flattened, required fields with messages that
//! name the field.

use serde_json::Value;

/// Every number of a (nested) array, in order; a lone number is a one-element list.
pub(crate) fn flat(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(a) => a.iter().flat_map(flat).collect(),
        Value::Number(n) => vec![n.as_f64().unwrap_or(f64::NAN)],
        _ => vec![],
    }
}

/// A required non-negative integer field.
pub(crate) fn field_u32(v: &Value, k: &str) -> Result<u32, String> {
    let x = v[k].as_u64().ok_or_else(|| format!("missing or non-integer field `{k}`"))?;
    u32::try_from(x).map_err(|_| format!("field `{k}` = {x} does not fit in 32 bits"))
}
