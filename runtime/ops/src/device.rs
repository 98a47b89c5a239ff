//! [`Device`]: what every application of this crate runs on — a backend, the manifest
//! of the generated kernels and the directory of their artifacts — and how it runs
//! them: once, or timed as a benchmark harness asks ([`Timing`]).

use onekernel_dsl::manifest::{KernelManifest, Manifest};
use onekernel_dsl::types::Literal;
use onekernel_runtime::backend::pass_on_buffers;
use onekernel_runtime::{Args, Backend, BackendError, BufferScope, Launch, Prelude, TimedUnit, Work};
use std::path::Path;

/// How a [`Device`] runs the launches of each following call, for benchmarks.
#[derive(Clone, Copy, Debug)]
pub struct Timing<'a> {
    /// Timed runs of each unit (the first ones are usually warm-up; the caller drops
    /// them).
    pub runs: u32,
    /// Each unit launched as this many layers back to back, each over its own copy of
    /// the inputs ([`BufferScope::PerLaunch`]), as a model's layers run in one decode
    /// step; the call returns the first layer's result. Only for one-kernel calls.
    pub layers: u32,
    /// Each kernel of a call timed as a unit of its own (the next one taking its last
    /// results), rather than all of a call's kernels as one unit.
    pub apart: bool,
    /// Run before each timed run, untimed (a benchmark's L2 flush).
    pub prelude: Option<&'a Prelude<'a>>,
}

/// Why [`Device::launch_variant`] could not launch: each application's error type
/// converts from it.
#[derive(Debug)]
pub(crate) enum VariantLaunchError {
    /// The manifest lacks the kernel.
    Missing(&'static str),
    /// The manifest's kernel lacks the variant.
    MissingVariant { kernel: &'static str, variant: String },
    /// The backend failed.
    Backend(BackendError),
}

/// The backend, manifest and artifacts the applications run on.
pub struct Device<'a> {
    backend: &'a mut dyn Backend,
    manifest: &'a Manifest,
    artifacts: &'a Path,
    timing: Option<Timing<'a>>,
    last_times: Vec<Vec<f64>>,
}

impl<'a> Device<'a> {
    /// Kernels of `manifest` (artifacts under `artifacts`) on `backend`, each launched
    /// once per call.
    pub fn new(backend: &'a mut dyn Backend, manifest: &'a Manifest, artifacts: &'a Path) -> Self {
        Device { backend, manifest, artifacts, timing: None, last_times: Vec::new() }
    }

    /// Times every following call as `timing` says (`None`: launch once, the default).
    pub fn set_timing(&mut self, timing: Option<Timing<'a>>) {
        self.timing = timing;
    }

    /// Device times (ns) of the last call: one list per timed unit (one per kernel when
    /// launched once or timed apart, else one for the call), one entry per run.
    pub fn last_times(&self) -> &[Vec<f64>] {
        &self.last_times
    }

    /// The backend.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The backend, for measurements beside the applications (a benchmark's driver copy).
    pub fn backend_mut(&mut self) -> &mut dyn Backend {
        &mut *self.backend
    }

    /// The manifest.
    pub fn manifest(&self) -> &'a Manifest {
        self.manifest
    }

    /// The directory the manifest's artifact paths are relative to.
    pub fn artifacts(&self) -> &'a Path {
        self.artifacts
    }

    /// The manifest entry of `name`.
    pub fn kernel(&self, name: &str) -> Option<&'a KernelManifest> {
        self.manifest.kernel(name)
    }

    /// Launches the variant of catalogue kernel `kernel` whose variant axes have the
    /// values `axes`, once over `groups` (or as the timing asks); written buffers end in
    /// `args`.
    pub(crate) fn launch_variant(
        &mut self,
        kernel: &'static str,
        axes: &[(&str, Literal)],
        args: &mut Args,
        groups: [u32; 3],
    ) -> Result<(), VariantLaunchError> {
        let k = self.kernel(kernel).ok_or(VariantLaunchError::Missing(kernel))?;
        let v = k.variant_with(axes).ok_or_else(|| VariantLaunchError::MissingVariant { kernel, variant: format!("{axes:?}") })?;
        let launch = Launch { kernel: k, artifacts: self.artifacts(), spec: &v.spec, groups };
        self.execute(std::slice::from_ref(&launch), std::slice::from_mut(args)).map_err(VariantLaunchError::Backend)
    }

    /// Runs `launches` in order (one argument set each; a read-write buffer passes on
    /// by name to the later launches), once or as the timing asks; written buffers end
    /// in `args`.
    pub fn execute(&mut self, launches: &[Launch], args: &mut [Args]) -> Result<(), BackendError> {
        self.last_times.clear();
        let Some(t) = self.timing else {
            onekernel_runtime::backend::check_sequence(self.backend.name(), launches, args, BufferScope::Shared)?;
            for i in 0..launches.len() {
                let stats = self.backend.launch(&launches[i], &mut args[i])?;
                self.last_times.push(vec![stats.device_ns.unwrap_or(f64::NAN)]);
                pass_on_buffers(launches, args, i);
            }
            return Ok(());
        };
        if t.apart {
            for i in 0..launches.len() {
                let times = self.time_unit(&t, &launches[i..=i], &mut args[i..=i])?;
                self.last_times.push(times);
                pass_on_buffers(launches, args, i);
            }
        } else {
            let times = self.time_unit(&t, launches, args)?;
            self.last_times.push(times);
        }
        Ok(())
    }

    /// One timed unit of `launches`, as `t.layers` layers where asked.
    fn time_unit(&mut self, t: &Timing, launches: &[Launch], args: &mut [Args]) -> Result<Vec<f64>, BackendError> {
        let unit = |launches, buffers| TimedUnit { work: Work::Launches { launches, buffers }, runs: t.runs.max(1), prelude: t.prelude };
        if t.layers <= 1 {
            return self.backend.time(&unit(launches, BufferScope::Shared), args);
        }
        if launches.len() != 1 {
            let kernel = launches.first().map_or_else(String::new, |l| l.kernel.name.clone());
            let message = format!("layers time one kernel at a time, not a sequence of {}", launches.len());
            return Err(BackendError::Arguments { kernel, backend: self.backend.name(), message });
        }
        let layers = vec![launches[0].clone(); t.layers as usize];
        let mut each = vec![args[0].clone(); t.layers as usize];
        let times = self.backend.time(&unit(&layers, BufferScope::PerLaunch), &mut each)?;
        args[0] = each.swap_remove(0);
        Ok(times)
    }
}
