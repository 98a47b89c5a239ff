//! Negative controls of the Vulkan validation layer as the runtime configures it: a
//! planted synchronization hazard (two dispatches over one buffer with the runtime's
//! barriers before and between them removed, through the `fault-injection` hook) must
//! be reported by synchronization validation, and a planted out-of-bounds write by
//! GPU-assisted validation; the same launches without the fault must pass. (The layer
//! of Debian 12, 1.3.239, reports the missing upload-to-dispatch barrier; it does not
//! flag two storage-buffer dispatches without a barrier between them, so that barrier
//! is covered by the bitwise tests of multi-launch units, not by the layer.) A reported message fails
//! the launch, so each control is a launch error naming the layer.
//!
//! Its own test binary, one test: it sets `ONEKERNEL_VK_VALIDATION_FEATURES`, which the
//! backend reads when it opens the device. In CI the layer must be present.

use onekernel_codegen::Builder;
use onekernel_dsl::manifest::Manifest;
use onekernel_runtime::vulkan::Vulkan;
use onekernel_runtime::{Args, Backend, BackendError, BufferScope, HostBuffer, Launch, TimedUnit, Work};
use onekernel_tests::harness;

mod k {
    use onekernel_macros::kernel;

    /// y[i] += 1: two launches in a row read and write every element.
    #[kernel(workgroup = 64)]
    pub fn bump(#[len(n)] y: &mut [f32], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            y[i] = y[i] + 1.0;
        }
    }

    /// y[i + 1] = 1 for i < n: the last invocation writes y[n], past the buffer.
    #[kernel(workgroup = 64)]
    pub fn write_past_end(#[len(n)] y: &mut [f32], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            y[i + 1] = 1.0;
        }
    }

    /// y[i] = 1 for i < n: the in-bounds twin of `write_past_end`.
    #[kernel(workgroup = 64)]
    pub fn write_in_bounds(#[len(n)] y: &mut [f32], #[push] n: u32) {
        let i = global_id().x;
        if i < n {
            y[i] = 1.0;
        }
    }
}

const N: u32 = 256;

/// Opens lavapipe (or the device ONEKERNEL_VK_DEVICE names) with the layer's `features`;
/// `None` (skipped) where there is no Vulkan or no layer outside CI.
fn device_with(features: &str) -> Option<Vulkan> {
    std::env::set_var("ONEKERNEL_VK_VALIDATION_FEATURES", features);
    let vk = harness::vulkan_or_skip()?;
    if !vk.validation_layer {
        assert!(std::env::var("CI").is_err(), "the Vulkan validation layer is required in CI (scripts/deps.sh installs it)");
        println!("SKIPPED: no Vulkan validation layer (VK_LAYER_KHRONOS_validation) on this machine");
        return None;
    }
    Some(vk)
}

fn layer_messages(r: Result<Vec<f64>, BackendError>) -> Vec<String> {
    match r {
        Err(BackendError::ValidationLayer { messages, .. }) => messages,
        Err(e) => panic!("expected the validation layer to fail the launch, got another error: {e}"),
        Ok(_) => vec![],
    }
}

/// Runs `launches` (one argument set each, buffers shared by name) as one timed unit.
fn run(vk: &mut Vulkan, launches: &[Launch]) -> Result<Vec<f64>, BackendError> {
    let mut args: Vec<Args> = launches.iter().map(|_| Args::new().buffer("y", HostBuffer::from_f32(&vec![0.0; N as usize])).scalar("n", N)).collect();
    let unit = TimedUnit { work: Work::Launches { launches, buffers: BufferScope::Shared }, runs: 1, prelude: None };
    vk.time(&unit, &mut args)
}

#[test]
fn the_layer_reports_a_planted_hazard_and_a_planted_out_of_bounds_write() {
    let dir = std::env::temp_dir().join(format!("onekernel-layer-controls-{}", std::process::id()));
    let kernels = vec![k::bump().unwrap(), k::write_past_end().unwrap(), k::write_in_bounds().unwrap()];
    let g = Builder::new().kernels(kernels).out_dir(&dir).write().unwrap();
    let m: Manifest = serde_json::from_slice(&g.files["manifest.json"]).unwrap();
    let launch = |name: &str| {
        let km = m.kernel(name).unwrap();
        Launch { kernel: km, artifacts: &dir, spec: &km.variants[0].spec, groups: [N.div_ceil(64), 1, 1] }
    };

    // Synchronization validation: bump, bump with and without the runtime's barriers.
    if let Some(mut vk) = device_with("sync") {
        let twice = [launch("bump"), launch("bump")];
        assert_eq!(layer_messages(run(&mut vk, &twice)), Vec::<String>::new(), "with the barrier nothing is reported");
        vk.omit_barriers(true);
        let messages = layer_messages(run(&mut vk, &twice));
        assert!(messages.iter().any(|m| m.contains("SYNC-HAZARD")), "no hazard reported without the barriers: {messages:#?}");
        println!("sync validation caught the planted hazard: {}", &messages[0][..messages[0].len().min(200)]);
    }

    // GPU-assisted validation: a write one element past the end of the bound buffer.
    if let Some(mut vk) = device_with("gpu") {
        assert_eq!(layer_messages(run(&mut vk, &[launch("write_in_bounds")])), Vec::<String>::new());
        let messages = layer_messages(run(&mut vk, &[launch("write_past_end")]));
        assert!(!messages.is_empty(), "GPU-assisted validation did not report the write past the end");
        assert!(messages.iter().any(|m| m.contains("out of bounds")), "{messages:#?}");
        println!("GPU-assisted validation caught the planted write: {}", &messages[0][..messages[0].len().min(200)]);
    }
    std::env::remove_var("ONEKERNEL_VK_VALIDATION_FEATURES");
    let _ = std::fs::remove_dir_all(dir);
}
