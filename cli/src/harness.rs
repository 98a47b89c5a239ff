//! The benchmark harness: what every timed figure of `onekernel bench` and
//! `onekernel bench-kvquant` is made of, on top of [`Backend::time`].
//!
//! * The L2 flush ([`l2_flush`]): before each timed run, the catalogue's `read_words`
//!   kernel reads [`L2_FLUSH_BYTES`] of zeroed scratch, a [`Prelude`] of the timed unit.
//!   Reading leaves the L2 full of clean lines, so the unit reads its inputs from DRAM
//!   and pays no write-back for lines a flush dirtied (a memset flush cost the timed
//!   kernel about 6–7 µs per CUDA decode step on the H200).
//! * The driver's own copy ([`driver_copy_gbs`]): the bandwidth ceiling of the device.
//! * [`median`] of the runs after [`WARMUP`] warm-ups.

use onekernel_dsl::manifest::{KernelManifest, Manifest};
use onekernel_dsl::types::StorageType;
use onekernel_runtime::{Args, Backend, BackendError, HostBuffer, Launch, Prelude, TimedUnit, Work};
use std::path::Path;

/// The catalogue kernel the L2 flush runs.
pub const FLUSH_READER: &str = "read_words";

/// Bytes the L2 flush reads before each timed run: 128 MiB, more than twice the 50 MB
/// L2 of an H100 or H200.
pub const L2_FLUSH_BYTES: u64 = 128 << 20;

/// The flush of a `--smoke` run (a check of the launch paths, not a measurement).
pub const SMOKE_FLUSH_BYTES: u64 = 1 << 20;

/// How the flush works, as the evidence JSON states it.
pub const L2_FLUSH_METHOD: &str = "read_words over zeroed scratch before each timed run (clean L2 lines)";

/// Runs dropped before the median: the first runs pay for clocks ramping up and for
/// first-touch costs.
pub const WARMUP: usize = 3;

/// Words one `read_words` workgroup reads (256 invocations, four words each).
const WORDS_PER_GROUP: u64 = 1024;

/// Workgroups a flush may dispatch: Vulkan's guaranteed minimum of
/// `maxComputeWorkGroupCount[0]`, so one dispatch covers the scratch everywhere.
const MAX_GROUPS: u64 = 65535;

/// Why the harness could not prepare a measurement.
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The flush cannot be built from this manifest or size.
    #[error("L2 flush: {0}")]
    Flush(String),
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// The L2 flush over `bytes` of zeroed scratch: `read_words` of `manifest` (artifacts
/// under `artifacts`), checked for its interface (buffers `words`, `hits`; push
/// constants `n`, `tag`; one variant), with a tag no invocation meets, so it writes
/// nothing. `bytes` must be a non-zero whole number of words one dispatch covers.
pub fn l2_flush<'a>(manifest: &'a Manifest, artifacts: &'a Path, bytes: u64) -> Result<Prelude<'a>, HarnessError> {
    let reader = manifest
        .kernel(FLUSH_READER)
        .ok_or_else(|| HarnessError::Flush(format!("`{FLUSH_READER}` is not in the manifest of {}", artifacts.display())))?;
    check_reader(reader)?;
    if bytes == 0 || !bytes.is_multiple_of(4) || bytes.div_ceil(4 * WORDS_PER_GROUP) > MAX_GROUPS {
        let most = MAX_GROUPS * WORDS_PER_GROUP * 4;
        return Err(HarnessError::Flush(format!(
            "the scratch is a whole number of 4-byte words, at least one and at most {most} bytes; got {bytes}"
        )));
    }
    let words = bytes / 4;
    let spec: &'a [_] = reader.variants.first().map_or(&[], |v| v.spec.as_slice());
    let launch = Launch { kernel: reader, artifacts, spec, groups: [words.div_ceil(WORDS_PER_GROUP) as u32, 1, 1] };
    let args = Args::new()
        .buffer("words", HostBuffer::zeros(StorageType::U32, words as usize))
        .buffer("hits", HostBuffer::zeros(StorageType::U32, 1))
        .scalar("n", words as u32)
        // Zeroed scratch XORs to 0, so no invocation meets this tag and none writes.
        .scalar("tag", u32::MAX);
    Ok(Prelude::new(launch, args))
}

/// `reader` is `read_words` with the interface the flush binds.
fn check_reader(reader: &KernelManifest) -> Result<(), HarnessError> {
    let buffers: Vec<&str> = reader.buffers.iter().map(|b| b.name.as_str()).collect();
    let push: Vec<&str> = reader.push_constants.iter().map(|p| p.name.as_str()).collect();
    if buffers != ["words", "hits"] || push != ["n", "tag"] || reader.variants.len() != 1 {
        return Err(HarnessError::Flush(format!(
            "`{FLUSH_READER}` must have buffers words, hits, push constants n, tag and one variant; the manifest's has buffers {buffers:?}, push constants {push:?}"
        )));
    }
    Ok(())
}

/// Bytes of the driver copy the benchmarks measure: 1 GiB (1 MiB in a `--quick` smoke
/// run).
pub fn driver_copy_bytes(quick: bool) -> u64 {
    if quick {
        1 << 20
    } else {
        1 << 30
    }
}

/// The driver's own device-to-device copy bandwidth in GB/s, counting bytes read and
/// written: the median of 20 timed copies of `bytes` after [`WARMUP`] warm-ups, each
/// after `prelude`. `None` where the backend has no device memory or no timer.
pub fn driver_copy_gbs(b: &mut dyn Backend, bytes: u64, prelude: Option<&Prelude>) -> Result<Option<f64>, HarnessError> {
    let unit = TimedUnit { work: Work::DriverCopy { bytes }, runs: 20 + WARMUP as u32, prelude };
    let t = match b.time(&unit, &mut []) {
        Ok(t) => t,
        Err(BackendError::Unsupported { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let m = median(&t[WARMUP.min(t.len())..]);
    Ok(m.is_finite().then(|| 2.0 * bytes as f64 / m))
}

/// The API call behind [`driver_copy_gbs`] on `backend`, for evidence files.
pub fn driver_copy_api(backend: &str) -> &'static str {
    match backend {
        "cuda" => "cuMemcpyDtoDAsync",
        "vulkan" => "vkCmdCopyBuffer",
        _ => "none",
    }
}

/// The median of the finite values (NaN when there are none).
pub fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The runs after the warm-ups.
pub fn after_warmup(times: &[f64]) -> &[f64] {
    &times[WARMUP.min(times.len())..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn manifest() -> (Manifest, PathBuf) {
        let generated = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../generated");
        (serde_json::from_slice(&std::fs::read(generated.join("manifest.json")).unwrap()).unwrap(), generated)
    }

    #[test]
    fn a_flush_reads_every_word_of_its_scratch_in_one_dispatch() {
        let (m, dir) = manifest();
        let f = l2_flush(&m, &dir, 128 << 20).unwrap();
        assert_eq!(f.launch().kernel.name, FLUSH_READER);
        assert_eq!(f.launch().groups, [32768, 1, 1]);
        assert_eq!(f.args().get_buffer("words").unwrap().as_bytes().len() as u64, 128 << 20);
        // A partial workgroup still counts.
        assert_eq!(l2_flush(&m, &dir, 4100).unwrap().launch().groups, [2, 1, 1]);
    }

    #[test]
    fn a_flush_of_part_of_a_word_or_by_another_kernel_is_rejected() {
        let (mut m, dir) = manifest();
        for bytes in [0, 6, (MAX_GROUPS + 1) * WORDS_PER_GROUP * 4] {
            let e = l2_flush(&m, &dir, bytes).unwrap_err().to_string();
            assert!(e.contains(&format!("got {bytes}")), "{e}");
        }
        // A manifest whose `read_words` has another interface (here: copy_words's).
        let copy = m.kernel("copy_words").unwrap().clone();
        let reader = m.kernels.iter_mut().find(|k| k.name == FLUSH_READER).unwrap();
        *reader = KernelManifest { name: FLUSH_READER.into(), ..copy };
        let e = l2_flush(&m, &dir, 1 << 20).unwrap_err().to_string();
        assert!(e.contains("must have buffers words, hits"), "{e}");
        m.kernels.retain(|k| k.name != FLUSH_READER);
        assert!(l2_flush(&m, &dir, 1 << 20).unwrap_err().to_string().contains("is not in the manifest"));
    }

    #[test]
    fn the_median_ignores_non_finite_runs() {
        assert_eq!(median(&[3.0, f64::NAN, 1.0, 2.0]), 2.0);
        assert!(median(&[f64::NAN]).is_nan());
        assert_eq!(after_warmup(&[9.0, 9.0, 9.0, 1.0]), &[1.0]);
        assert!(after_warmup(&[1.0]).is_empty());
    }
}
