//! The interpreter behind the [`Backend`] interface, so the validator treats the
//! reference like any device.

use crate::args::Args;
use crate::backend::{check_args, Backend, BackendError, DeviceInfo, Launch, LaunchStats};
use onekernel_dsl::Kernel;
use std::collections::HashMap;

/// The reference interpreter as a backend; it runs kernels from their IR.
pub struct CpuBackend {
    kernels: HashMap<String, Kernel>,
    info: DeviceInfo,
}

impl CpuBackend {
    /// A backend that can run the given kernels.
    pub fn new(kernels: impl IntoIterator<Item = Kernel>) -> Self {
        CpuBackend {
            kernels: kernels.into_iter().map(|k| (k.name.clone(), k)).collect(),
            info: DeviceInfo {
                backend: "cpu".into(),
                device: "onekernel reference interpreter".into(),
                driver: format!("onekernel-runtime {}", env!("CARGO_PKG_VERSION")),
                subgroup_size: None,
                denormals: "preserved (IEEE-754)".into(),
                fma: "f32::mul_add (fused, one rounding)".into(),
                f16_widening: "exact (IEEE-754)".into(),
                async_copies: false,
                async_panels: false,
                max_shared_bytes: None,
                buffer_checks: "every access (an out-of-bounds index is an error)".into(),
                validation: "none".into(),
            },
        }
    }

    /// The same backend reporting asynchronous copies, so that runtimes choose the
    /// variants and schedules meant for such devices (the interpreter runs their copies
    /// synchronously and checks their protocol); for tests of those schedules.
    pub fn reporting_async_copies(mut self) -> Self {
        self.info.async_copies = true;
        self
    }
}

impl Backend for CpuBackend {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn launch(&mut self, l: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError> {
        self.launch_in_order(l, args, false)
    }

    fn launch_reversed(&mut self, l: &Launch, args: &mut Args) -> Option<Result<LaunchStats, BackendError>> {
        Some(self.launch_in_order(l, args, true))
    }
}

impl CpuBackend {
    /// A launch with the workgroups in linear order or, `reversed`, the opposite.
    fn launch_in_order(&mut self, l: &Launch, args: &mut Args, reversed: bool) -> Result<LaunchStats, BackendError> {
        check_args("cpu", l, args)?;
        let k = self.kernels.get(&l.kernel.name).ok_or_else(|| BackendError::Unavailable {
            backend: "cpu",
            reason: format!("the interpreter has no IR for kernel `{}`", l.kernel.name),
        })?;
        for (name, v) in l.spec {
            args.set(name, crate::args::ArgValue::Scalar(*v));
        }
        let r = super::run_with(k, args, l.groups, super::RunOptions { reversed, ..Default::default() });
        for (name, _) in l.spec {
            args.remove(name);
        }
        r?;
        Ok(LaunchStats { device_ns: None })
    }
}
