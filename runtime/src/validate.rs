//! The bit-exactness validator: runs a kernel variant on a backend and on the reference
//! interpreter with the same seeded inputs, compares every output buffer by the
//! kernel's class (bitwise for `exact`; NMSE ≤ 5e-4 for `fast`), and records evidence.

use crate::args::Args;
use crate::backend::{Backend, BackendError, DeviceInfo, Launch};
use crate::buffer::HostBuffer;
use onekernel_dsl::cases::{Case, Fill};
use onekernel_dsl::ir::{Access, Determinism};
use onekernel_dsl::manifest::{KernelManifest, VariantEntry};
use onekernel_dsl::types::StorageType;
use serde::Serialize;
use std::path::Path;

/// NMSE bound for `fast` kernels (llama.cpp's test-backend-ops bound for attention).
pub const FAST_NMSE: f64 = 5e-4;

/// The outcome of one kernel × variant × case on one backend.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// Kernel name.
    pub kernel: String,
    /// Variant label.
    pub variant: String,
    /// Case label.
    pub case: String,
    /// Backend name.
    pub backend: String,
    /// Seed of the inputs.
    pub seed: u64,
    /// Workgroups dispatched.
    pub groups: [u32; 3],
    /// Buffer name and length of every buffer.
    pub shapes: Vec<(String, usize)>,
    /// Determinism class the comparison used.
    pub class: Determinism,
    /// Whether the outputs meet the class's criterion.
    pub passed: bool,
    /// Output elements whose bits differ from the reference (NaN equals NaN).
    pub mismatches: usize,
    /// The first differing element: `buffer[index]: reference vs backend` (as bits).
    pub first_mismatch: Option<String>,
    /// Largest distance in units in the last place among float outputs.
    pub max_ulp: f64,
    /// Normalized mean squared error of float outputs against the reference.
    pub nmse: f64,
    /// Device time of the backend's dispatch, where measured.
    pub device_ns: Option<f64>,
    /// Where the reference interpreter faulted on this case (a data race, an index out
    /// of bounds, a read of uninitialized shared memory …): the DSL source itself is
    /// wrong, nothing was compared, and the case failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reference_fault: Option<String>,
}

/// SplitMix64: the generator behind every seeded input (fixed forever).
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The inputs of a case for a seed.
pub fn inputs(k: &KernelManifest, case: &Case, seed: u64) -> Result<Args, String> {
    let mut args = Args::new();
    let mut state = seed;
    for b in &case.buffers {
        let decl = k.buffers.iter().find(|d| d.name == b.name).ok_or_else(|| format!("case `{}` names unknown buffer `{}`", case.label, b.name))?;
        let unit = |s: &mut u64| (splitmix(s) >> 11) as f64 / (1u64 << 53) as f64;
        let buf = match (&b.fill, decl.elem) {
            (Fill::Zeros, elem) => HostBuffer::zeros(elem, b.len),
            (Fill::Uniform { lo, hi }, elem) => {
                let v: Vec<f32> = (0..b.len).map(|_| (lo + (hi - lo) * unit(&mut state)) as f32).collect();
                match elem {
                    StorageType::F32 => HostBuffer::from_f32(&v),
                    StorageType::F16 => HostBuffer::f16_from_f32(&v),
                    StorageType::Bf16 => HostBuffer::bf16_from_f32(&v),
                    other => return Err(format!("buffer `{}` is {other}: use Fill::Ints", b.name)),
                }
            }
            (Fill::Bits { and, or }, StorageType::U32) => {
                let v: Vec<u32> = (0..b.len).map(|_| ((splitmix(&mut state) >> 32) as u32 & and) | or).collect();
                HostBuffer::from_u32(&v)
            }
            (Fill::Bits { .. }, other) => return Err(format!("buffer `{}` is {other}: Fill::Bits fills u32 words", b.name)),
            (Fill::Distinct { n }, elem) => {
                if b.len > *n as usize {
                    return Err(format!("buffer `{}`: {} distinct values from [0, {n}) do not exist", b.name, b.len));
                }
                // The first `len` entries of a Fisher–Yates shuffle of 0 … n − 1.
                let mut pool: Vec<u32> = (0..*n).collect();
                let mut h = HostBuffer::zeros(elem, b.len);
                for i in 0..b.len {
                    let j = i + (splitmix(&mut state) % (pool.len() - i) as u64) as usize;
                    pool.swap(i, j);
                    h.store_bits(i, pool[i]);
                }
                h
            }
            (Fill::Steps { step }, elem) => {
                let mut h = HostBuffer::zeros(elem, b.len);
                for i in 0..b.len {
                    h.store_bits(i, (i as u32).wrapping_mul(*step));
                }
                h
            }
            (Fill::Ints { lo, hi }, elem) => {
                let mut h = HostBuffer::zeros(elem, b.len);
                for i in 0..b.len {
                    let span = (hi - lo + 1).max(1) as u64;
                    h.store_bits(i, (lo + (splitmix(&mut state) % span) as i64) as u32);
                }
                h
            }
        };
        args = args.buffer(&b.name, buf);
    }
    for (n, v) in &case.scalars {
        args = args.scalar(n, *v);
    }
    Ok(args)
}

/// Every element of every read-write buffer of `k` in `a` and `b`: the buffer, the index,
/// the two elements' bits and whether they are f32 values.
fn each_output(k: &KernelManifest, a: &Args, b: &Args, mut f: impl FnMut(&str, usize, u32, u32, bool)) {
    for buf in k.buffers.iter().filter(|d| d.access == Access::ReadWrite) {
        let (Some(x), Some(y)) = (a.get_buffer(&buf.name), b.get_buffer(&buf.name)) else { continue };
        let float = buf.elem.value_type() == onekernel_dsl::types::Scalar::F32;
        for i in 0..x.len() {
            f(&buf.name, i, x.load_bits(i), y.load_bits(i), float);
        }
    }
}

/// Both NaN (payloads are not part of the contract).
fn both_nan(x: u32, y: u32, float: bool) -> bool {
    float && f32::from_bits(x).is_nan() && f32::from_bits(y).is_nan()
}

/// The first output element whose bits differ between `a` and `b` (NaN equals NaN), as
/// `` `buffer[index]` is x vs y``.
fn first_difference(k: &KernelManifest, a: &Args, b: &Args) -> Option<String> {
    let mut first = None;
    each_output(k, a, b, |name, i, x, y, float| {
        if first.is_none() && x != y && !both_nan(x, y, float) {
            first = Some(format!("`{name}[{i}]` is {x:#010x} vs {y:#010x}"));
        }
    });
    first
}

fn ulp_distance(a: u32, b: u32) -> f64 {
    let key = |x: u32| if x & 0x8000_0000 != 0 { -((x & 0x7fff_ffff) as i64) } else { x as i64 };
    (key(a) - key(b)).unsigned_abs() as f64
}

/// Options of one validation.
#[derive(Clone, Copy, Debug, Default)]
pub struct ValidateOptions {
    /// Negative control: change one input element for the backend run only, so a
    /// correct validator must report a mismatch.
    pub perturb_input: bool,
}

/// Validates one kernel variant on one case against the reference.
#[allow(clippy::too_many_arguments)]
pub fn validate(
    backend: &mut dyn Backend,
    reference: &mut dyn Backend,
    k: &KernelManifest,
    artifacts: &Path,
    variant: &VariantEntry,
    case: &Case,
    seed: u64,
    opts: ValidateOptions,
) -> Result<Verdict, BackendError> {
    let args = inputs(k, case, seed).map_err(|message| BackendError::Arguments { kernel: k.name.clone(), backend: "validator", message })?;
    let launch = Launch { kernel: k, artifacts, spec: &variant.spec, groups: case.groups };
    let mut want = args.clone();
    // A fault of the reference is the kernel's own (its DSL source is wrong): that case
    // fails with the interpreter's message, and the caller goes on with the next one.
    let backend_name = backend.name().to_string();
    let faulted = |why: String| Verdict {
        kernel: k.name.clone(),
        variant: variant.label.clone(),
        case: case.label.clone(),
        backend: backend_name.clone(),
        seed,
        groups: case.groups,
        shapes: case.buffers.iter().map(|b| (b.name.clone(), b.len)).collect(),
        class: k.class,
        passed: false,
        mismatches: 0,
        first_mismatch: None,
        max_ulp: 0.0,
        nmse: 0.0,
        device_ns: None,
        reference_fault: Some(why),
    };
    if let Err(e) = reference.launch(&launch, &mut want) {
        return Ok(faulted(format!("the reference interpreter ({}) faulted: {e}", reference.name())));
    }
    // Workgroups that finish a result together (`last_arrival`) must give the same bits
    // whichever arrives last: the reference again, its workgroups in reverse order.
    if k.arrivals {
        let mut reversed = args.clone();
        match reference.launch_reversed(&launch, &mut reversed) {
            Some(Err(e)) => return Ok(faulted(format!("the reference interpreter ({}), workgroups reversed, faulted: {e}", reference.name()))),
            Some(Ok(_)) => {
                if let Some(at) = first_difference(k, &want, &reversed) {
                    return Ok(faulted(format!(
                        "the results depend on the order the workgroups run in (which one arrives last): {at} in linear and reverse order"
                    )));
                }
            }
            None => {}
        }
    }
    let mut got = args;
    if opts.perturb_input {
        if let Some(b) = k.buffers.iter().find(|b| b.access == Access::ReadOnly) {
            if let Some(h) = got.get_buffer_mut(&b.name) {
                let bits = h.load_bits(0);
                h.store_bits(
                    0,
                    if b.elem.value_type() == onekernel_dsl::types::Scalar::F32 { (f32::from_bits(bits) + 1.0).to_bits() } else { bits ^ 1 },
                );
            }
        }
    }
    let stats = backend.launch(&launch, &mut got)?;
    let (mut mismatches, mut first, mut max_ulp, mut err2, mut ref2) = (0usize, None, 0f64, 0f64, 0f64);
    each_output(k, &want, &got, |name, i, x, y, float| {
        let nan = both_nan(x, y, float);
        if x != y && !nan {
            mismatches += 1;
            if first.is_none() {
                first = Some(format!("{name}[{i}]: reference {x:#010x} vs {backend_name} {y:#010x}"));
            }
            // Equal bits add nothing (an infinity equal on both sides would add NaN).
            if float {
                max_ulp = max_ulp.max(ulp_distance(x, y));
                let (xf, yf) = (f32::from_bits(x) as f64, f32::from_bits(y) as f64);
                err2 += (xf - yf) * (xf - yf);
            }
        }
        if float && !nan && f32::from_bits(x).is_finite() {
            let xf = f32::from_bits(x) as f64;
            ref2 += xf * xf;
        }
    });
    let nmse = if ref2 > 0.0 { err2 / ref2 } else { err2 };
    let passed = match k.class {
        Determinism::Exact => mismatches == 0,
        Determinism::Fast => nmse <= FAST_NMSE,
    };
    Ok(Verdict {
        passed,
        mismatches,
        first_mismatch: first,
        max_ulp,
        nmse,
        device_ns: stats.device_ns,
        reference_fault: None,
        ..faulted(String::new())
    })
}

/// Evidence of one validation run on one backend.
#[derive(Clone, Debug, Serialize)]
pub struct Evidence {
    /// The device.
    pub device: DeviceInfo,
    /// The command that produced this file.
    pub command: String,
    /// UTC time of the run (seconds since the Unix epoch).
    pub unix_time: u64,
    /// Every verdict.
    pub verdicts: Vec<Verdict>,
    /// `passed` when every verdict passed.
    pub result: String,
}

impl Evidence {
    /// Writes `<dir>/<backend>-<device>.json`; returns the path.
    pub fn write(&self, dir: &Path) -> std::io::Result<std::path::PathBuf> {
        std::fs::create_dir_all(dir)?;
        let path = dir.join(format!("validate-{}-{}.json", self.device.backend, self.device.slug()));
        let mut json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        json.push('\n');
        std::fs::write(&path, json)?;
        Ok(path)
    }
}
