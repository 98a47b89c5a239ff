//! `onekernel vk-stats`: the Vulkan driver compiler's own report — registers, shared
//! memory, instruction counts, whatever the driver names — for every kernel × variant
//! (or the `--kernel`s named), through `VK_KHR_pipeline_executable_properties`: the
//! Vulkan counterpart of `nvcc --resource-usage`, to explain a Vulkan/CUDA gap. With
//! `--evidence DIR` it also writes `vk-stats-<device>.json`.

use crate::common::{command_line, read_manifest, unix_time};
use anyhow::{bail, Context, Result};
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::{Backend, Launch};
use std::path::PathBuf;

/// Runs the command; `Ok(true)` when every requested pipeline reported.
pub fn vk_stats_cmd(args: &[String]) -> Result<bool> {
    use crate::flags::{list, one};
    let p = crate::flags::parse("vk-stats", args, &[one("out"), list("kernel"), one("evidence")], false)?;
    let out = p.one("out").map(PathBuf::from).unwrap_or_else(crate::common::default_generated);
    let kernels = crate::common::kernel_names(&p.list("kernel"))?;
    let evidence = p.one("evidence").map(PathBuf::from);
    let manifest = read_manifest(&out)?;
    for n in &kernels {
        if manifest.kernel(n).is_none() {
            bail!("no kernel `{n}` in {}/manifest.json", out.display());
        }
    }
    let vk = Vulkan::new().context("vk-stats needs a Vulkan device")?;
    if !vk.has_pipeline_statistics() {
        bail!(
            "{} ({}): the driver does not offer VK_KHR_pipeline_executable_properties, so it reports no pipeline statistics",
            vk.info().device,
            vk.info().driver
        );
    }
    let device = vk.info().clone();
    eprintln!("vulkan: {} ({})", device.device, device.driver);
    let mut records = Vec::new();
    for k in manifest.kernels.iter().filter(|k| kernels.is_empty() || kernels.contains(&k.name)) {
        for v in &k.variants {
            let launch = Launch { kernel: k, artifacts: &out, spec: &v.spec, groups: [1, 1, 1] };
            let exes = match vk.pipeline_statistics(&launch) {
                Err(onekernel_runtime::BackendError::Unsupported { reason, .. }) => {
                    println!("{:<22} {:<38} SKIPPED: {reason}", k.name, v.label);
                    continue;
                }
                r => r.with_context(|| format!("kernel `{}` variant `{}` on vulkan", k.name, v.label))?,
            };
            for x in &exes {
                let line: Vec<String> = x.statistics.iter().map(|s| format!("{} {}", s.name, s.value)).collect();
                println!("{:<22} {:<38} {} (subgroup {}): {}", k.name, v.label, x.name, x.subgroup_size, line.join(", "));
                records.push(serde_json::json!({
                    "kernel": k.name, "variant": v.label, "executable": x.name, "subgroup_size": x.subgroup_size,
                    "statistics": x.statistics.iter().map(|s| serde_json::json!({"name": s.name, "value": s.value, "description": s.description})).collect::<Vec<_>>(),
                }));
            }
        }
    }
    if let Some(dir) = evidence {
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join(format!("vk-stats-{}.json", device.slug()));
        let doc = serde_json::json!({"command": command_line(), "unix_time": unix_time(), "device": device, "pipelines": records});
        std::fs::write(&path, serde_json::to_string_pretty(&doc)? + "\n").with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("evidence written to {}", path.display());
    }
    Ok(true)
}
