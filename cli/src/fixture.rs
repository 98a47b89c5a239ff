//! `onekernel fixture`: external fixture files on the backends, against their float64
//! reference within each file's tolerance.

use crate::common::{command_line, open_list, read_manifest, unix_time};
use crate::USAGE;
use anyhow::{bail, Context, Result};
use std::path::PathBuf;

/// Runs the fixture files named in `args`; `Ok(false)` when any fails.
pub fn fixture_cmd(args: &[String]) -> Result<bool> {
    use crate::flags::switch;
    use crate::flags::{list, one};
    let p = crate::flags::parse("fixture", args, &[list("backend"), one("out"), one("evidence"), switch("prefill-fast")], true)?;
    // `flash_attn_prefill` files in the fast mode (`attn_prefill_mma`) instead of the exact one.
    let prefill_fast = p.has("prefill-fast");
    let files: Vec<PathBuf> = p.positional.iter().map(PathBuf::from).collect();
    let backends = if p.has("backend") { p.list("backend").join(",") } else { "cpu,vulkan,cuda".to_string() };
    let out = p.one("out").map(PathBuf::from).unwrap_or_else(crate::common::default_generated);
    let evidence = p.one("evidence").map(PathBuf::from);
    if files.is_empty() {
        bail!("`fixture` needs at least one FILE.json\n\n{USAGE}");
    }
    let manifest = read_manifest(&out)?;
    let mut opened = open_list(&backends, p.has("backend"))?;
    let mut all_passed = true;
    let mut records: Vec<serde_json::Value> = Vec::new();
    for f in &files {
        let fx: serde_json::Value =
            match std::fs::read(f).map_err(anyhow::Error::from).and_then(|b| serde_json::from_slice(&b).map_err(anyhow::Error::from)) {
                Ok(v) => v,
                Err(e) => {
                    println!("{}: ERROR cannot read: {e}", f.display());
                    all_passed = false;
                    continue;
                }
            };
        let file = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        for b in opened.iter_mut() {
            // The decode-attention schema, the linear-attention one, or the elizaOS
            // KV-quant schema.
            let linear = matches!(fx["kernel"].as_str(), Some("gated_delta_net" | "ssm_conv"));
            let outcome = if linear {
                onekernel_ops::linear::fixture::run_linear(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &manifest, &out)).map(|r| {
                    let line = format!("NMSE {:.3e} (≤ {:e})  max |err| {:.3e} (≤ {:e})", r.nmse, r.nmse_bound, r.max_abs, r.max_abs_bound);
                    (r.passed, line, serde_json::to_value(&r).unwrap_or_default())
                })
            } else if prefill_fast && fx["kernel"].as_str() == Some("flash_attn_prefill") {
                match onekernel_ops::fixture::run_prefill_tensor_cores(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &manifest, &out)) {
                    Ok(onekernel_ops::fixture::FastOutcome::Ran(r)) => Ok(attention_line(&r)),
                    Ok(onekernel_ops::fixture::FastOutcome::Unsupported(why)) => {
                        // Not a pass and not a failure: the device lacks register tiles.
                        println!("{file:<40} {:<7} SKIPPED (fast prefill) {why}", b.name());
                        records.push(serde_json::json!({"fixture": f.display().to_string(), "device": b.info(), "skipped": why}));
                        continue;
                    }
                    Err(e) => Err(e),
                }
            } else if matches!(fx["kernel"].as_str(), Some("flash_attn_decode" | "flash_attn_prefill")) {
                onekernel_ops::fixture::run_attention(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &manifest, &out)).map(|r| attention_line(&r))
            } else {
                onekernel_ops::kvquant::fixture::run_eliza(&fx, &mut onekernel_ops::Device::new(b.as_mut(), &manifest, &out)).map(|r| {
                    let line = format!("{:<20} {:>5} values  max |Δ| {:.3e} (≤ {:e})", r.kernel, r.compared, r.max_abs, r.tolerance);
                    (r.passed, line, serde_json::to_value(&r).unwrap_or_default())
                })
            };
            match outcome {
                Ok((passed, line, result)) => {
                    println!("{file:<40} {:<7} {line}  {}", b.name(), if passed { "ok" } else { "FAIL" });
                    all_passed &= passed;
                    records.push(serde_json::json!({"fixture": f.display().to_string(), "device": b.info(), "result": result}));
                }
                Err(e) => {
                    println!("{file:<40} {:<7} ERROR {e}", b.name());
                    records.push(serde_json::json!({"fixture": f.display().to_string(), "device": b.info(), "error": e}));
                    all_passed = false;
                }
            }
        }
    }
    if let Some(dir) = evidence {
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let doc = serde_json::json!({
            "command": command_line(),
            "unix_time": unix_time(),
            "result": if all_passed { "passed" } else { "failed" },
            "runs": records,
        });
        let p = dir.join("fixtures.json");
        std::fs::write(&p, serde_json::to_string_pretty(&doc)? + "\n").with_context(|| format!("cannot write {}", p.display()))?;
        eprintln!("evidence written to {}", p.display());
    }
    Ok(all_passed)
}

/// An attention fixture's verdict, its line and its record.
fn attention_line(r: &onekernel_ops::fixture::FixtureResult) -> (bool, String, serde_json::Value) {
    let mut line = format!("NMSE {:.3e} (≤ {:e})  max |err| {:.3e} (≤ {:e})", r.nmse, r.nmse_bound, r.max_abs, r.max_abs_bound);
    if let (Some(c), Some(bound)) = (r.cosine, r.cosine_bound) {
        line += &format!("  cosine {c:.7} (≥ {bound})");
    }
    (r.passed, line, serde_json::to_value(r).unwrap_or_default())
}
