//! Generation of every artifact for a set of kernels: per kernel CUDA, GLSL, SPIR-V and
//! MSL plus its manifest entry; kernels are processed in parallel, results are placed
//! by index, so the output never depends on the thread count.

use crate::analysis::{KernelInfo, F16_SPEC_ID, FMA_SPEC_ID};
use crate::dialect::{Cuda, Glsl, Msl};
use crate::error::CodegenError;
use crate::manifest::{self, Artifact, CudaEntry, KernelManifest, Manifest, MetalEntry, VulkanEntry};
use crate::spirv::{self, NagaVerdict, SpecValue};
use crate::templates;
use onekernel_dsl::ir::{Kernel, ParamKind};
use onekernel_dsl::types::Literal;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Generated files, keyed by path relative to the output directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generated {
    /// Path → contents, sorted by path.
    pub files: BTreeMap<String, Vec<u8>>,
    /// naga's verdicts per kernel, sorted by kernel name (not written to disk).
    pub naga: BTreeMap<String, NagaReport>,
}

/// What naga made of one kernel's specialized modules (every variant × every
/// device-fact spec constant the runtime sets).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NagaReport {
    /// Modules naga parsed and validated.
    pub valid: usize,
    /// Modules naga's SPIR-V reader cannot read: `(variant, naga's reason)`.
    pub not_checkable: Vec<(String, String)>,
}

impl NagaReport {
    /// The distinct reasons of the modules naga cannot read.
    pub fn reasons(&self) -> Vec<&str> {
        let mut r: Vec<&str> = self.not_checkable.iter().map(|(_, why)| why.as_str()).collect();
        r.sort_unstable();
        r.dedup();
        r
    }
}

/// How long each kernel took, for progress output.
#[derive(Clone, Debug)]
pub struct KernelTiming {
    /// Kernel name.
    pub name: String,
    /// Wall time for all its backends.
    pub elapsed: Duration,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

fn artifact(path: String, bytes: &[u8]) -> Artifact {
    Artifact { path, sha256: sha256_hex(bytes) }
}

/// All artifacts of one kernel.
pub struct KernelOutput {
    /// Files of this kernel.
    pub files: Vec<(String, Vec<u8>)>,
    /// Its manifest entry.
    pub manifest: KernelManifest,
    /// naga's verdicts on its specialized modules.
    pub naga: NagaReport,
}

/// Generates one kernel for every backend.
pub fn generate_kernel(k: &Kernel) -> Result<KernelOutput, CodegenError> {
    onekernel_dsl::validate::validate(k).map_err(|errors| CodegenError::Invalid { kernel: k.name.clone(), errors })?;
    let info = KernelInfo::of(k);
    let cuda = templates::render(k, &info, &Cuda)?;
    let glsl = templates::render(k, &info, &Glsl)?;
    let msl = templates::render(k, &info, &Msl)?;
    let words = spirv::compile(&k.name, &glsl)?;
    let words = spirv::forbid_contraction(&words).map_err(|message| CodegenError::SpirvInvalid {
        kernel: k.name.clone(),
        target: spirv::TARGET_ENV,
        message,
    })?;
    spirv::validate(&k.name, &words)?;
    let reflection = spirv::reflect(&words).map_err(|message| CodegenError::Reflection { kernel: k.name.clone(), message })?;
    let (buffers, push, specs) = manifest::interface(k);
    cross_check_interface(k, &info, &reflection, buffers.len(), push.len(), specs.len())?;
    let spv = spirv::to_bytes(&words);

    let paths =
        (format!("cuda/{}.cu", k.name), format!("vulkan/{}.comp", k.name), format!("vulkan/{}.spv", k.name), format!("metal/{}.metal", k.name));
    let declared: u32 = k.shared.iter().map(|s| 4 * s.len).sum();
    let has_specs = info.has_specs;
    let m = KernelManifest {
        name: k.name.clone(),
        doc: k.doc.clone(),
        class: k.class,
        source: k.source.clone(),
        workgroup: k.workgroup,
        param_names: k.params.iter().map(|p| p.name.clone()).collect(),
        dispatch: "caller chooses the workgroup count; each workgroup runs workgroup[0]*workgroup[1]*workgroup[2] invocations".into(),
        push_constant_bytes: 4 * push.len() as u32,
        variants: manifest::variants(&info.instances, k, info.scratch_bytes),
        buffers,
        push_constants: push,
        spec_constants: specs,
        shared_bytes: declared + info.scratch_bytes,
        tiles: info.uses_tiles.then(manifest::TileFeatures::standard),
        arrivals: info.arrivals,
        functions: k.functions.iter().map(|f| f.name.clone()).collect(),
        cuda: CudaEntry {
            source: artifact(paths.0.clone(), cuda.as_bytes()),
            entry: (!has_specs).then(|| k.name.clone()),
            template: has_specs.then(|| format!("{}_impl", k.name)),
            options: manifest::CUDA_OPTIONS.iter().map(|s| s.to_string()).collect(),
            dynamic_shared: !info.cuda_dynamic_shared.is_empty(),
        },
        vulkan: VulkanEntry {
            glsl: artifact(paths.1.clone(), glsl.as_bytes()),
            spirv: artifact(paths.2.clone(), &spv),
            entry: "main".into(),
            target_env: spirv::TARGET_ENV.into(),
            fma_spec_id: info.uses_fma.then_some(FMA_SPEC_ID),
            f16_spec_id: Some(F16_SPEC_ID),
            reflection,
        },
        metal: MetalEntry {
            source: artifact(paths.3.clone(), msl.as_bytes()),
            entry: k.name.clone(),
            push_buffer_index: info.has_push.then(|| k.params.iter().filter(|p| matches!(p.kind, ParamKind::Buffer { .. })).count() as u32),
            compile_options: vec!["mathMode = MTLMathModeSafe".into(), "mathFloatingPointFunctions = MTLMathFloatingPointFunctionsPrecise".into()],
        },
    };
    let naga = naga_check_variants(&m, &words)?;
    Ok(KernelOutput {
        files: vec![(paths.0, cuda.into_bytes()), (paths.1, glsl.into_bytes()), (paths.2, spv), (paths.3, msl.into_bytes())],
        manifest: m,
        naga,
    })
}

/// Specializes the module for every variant and every value of the device-fact spec
/// constants (native fma, exact f16 unpack) and checks each with naga.
fn naga_check_variants(m: &KernelManifest, words: &[u32]) -> Result<NagaReport, CodegenError> {
    let spec_value = |v: Literal| match v {
        Literal::Bool(b) => SpecValue::Bool(b),
        Literal::U32(x) => SpecValue::U32(x),
        Literal::I32(x) => SpecValue::I32(x),
        Literal::F32(bits) => SpecValue::F32(bits),
    };
    let facts: Vec<u32> = m.vulkan.fma_spec_id.into_iter().chain(m.vulkan.f16_spec_id).collect();
    let mut report = NagaReport::default();
    for variant in &m.variants {
        let mut values: Vec<(u32, SpecValue)> = Vec::new();
        for (name, v) in &variant.spec {
            if let Some(s) = m.spec_constants.iter().find(|s| &s.name == name) {
                values.push((s.id, spec_value(*v)));
            }
        }
        for bits in 0..1u32 << facts.len() {
            let mut all = values.clone();
            let mut label = variant.label.clone();
            for (i, id) in facts.iter().enumerate() {
                let on = bits >> i & 1 == 1;
                all.push((*id, SpecValue::Bool(on)));
                label.push_str(&format!(" spec{id}={on}"));
            }
            let err = |message: String| CodegenError::NagaRejected { kernel: m.name.clone(), variant: label.clone(), message };
            let specialized = spirv::specialize(words, &all).map_err(err)?;
            match spirv::naga_check(&specialized).map_err(err)? {
                NagaVerdict::Valid => report.valid += 1,
                NagaVerdict::NotCheckable(why) => report.not_checkable.push((label, why)),
            }
        }
    }
    Ok(report)
}

/// Checks that a module declares exactly the interface the generator meant to emit
/// (`n_*`: how many buffers, push constants and spec constants the kernel has).
pub fn cross_check_interface(
    k: &Kernel,
    info: &KernelInfo,
    r: &spirv::Reflection,
    n_buffers: usize,
    n_push: usize,
    n_specs: usize,
) -> Result<(), CodegenError> {
    let err = |message: String| Err(CodegenError::Reflection { kernel: k.name.clone(), message });
    let want_bindings: Vec<(u32, u32)> = (0..n_buffers as u32).map(|b| (0, b)).collect();
    if r.bindings != want_bindings {
        return err(format!("bindings {:?}, expected {:?}", r.bindings, want_bindings));
    }
    let want_push: Vec<u32> = (0..n_push as u32).map(|i| 4 * i).collect();
    if r.push_offsets != want_push {
        return err(format!("push-constant offsets {:?}, expected {:?}", r.push_offsets, want_push));
    }
    if r.push_size > onekernel_dsl::validate::MAX_PUSH_BYTES {
        return err(format!("push constants take {} bytes, over the 128-byte limit", r.push_size));
    }
    let mut want_specs: Vec<u32> = (0..n_specs as u32).collect();
    if info.uses_fma {
        want_specs.push(FMA_SPEC_ID);
    }
    want_specs.push(F16_SPEC_ID);
    if r.spec_ids != want_specs {
        return err(format!("spec ids {:?}, expected {:?}", r.spec_ids, want_specs));
    }
    if r.local_size != k.workgroup {
        return err(format!("local size {:?}, expected {:?}", r.local_size, k.workgroup));
    }
    Ok(())
}

/// Generates every kernel with `threads` workers, calling `progress` after each one
/// (in completion order). The output does not depend on `threads`.
pub fn generate_all(kernels: &[Kernel], threads: usize, progress: &(dyn Fn(usize, usize, &KernelTiming) + Sync)) -> Result<Generated, CodegenError> {
    let mut names = std::collections::BTreeSet::new();
    if let Some(k) = kernels.iter().find(|k| !names.insert(k.name.as_str())) {
        return Err(CodegenError::DuplicateKernel { name: k.name.clone() });
    }
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<KernelOutput, CodegenError>>>> = Mutex::new((0..kernels.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(kernels.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(k) = kernels.get(i) else { break };
                let t = Instant::now();
                let r = generate_kernel(k);
                let timing = KernelTiming { name: k.name.clone(), elapsed: t.elapsed() };
                let n = done.fetch_add(1, Ordering::SeqCst) + 1;
                progress(n, kernels.len(), &timing);
                if let Ok(mut all) = results.lock() {
                    all[i] = Some(r);
                }
            });
        }
    });
    let results = results.into_inner().unwrap_or_default();
    let mut out = Generated::default();
    let mut manifests = Vec::new();
    for r in results.into_iter().flatten() {
        let ko = r?;
        for (p, bytes) in ko.files {
            out.files.insert(p, bytes);
        }
        out.naga.insert(ko.manifest.name.clone(), ko.naga);
        manifests.push(ko.manifest);
    }
    manifests.sort_by(|a, b| a.name.cmp(&b.name));
    let manifest =
        Manifest { schema: manifest::SCHEMA_VERSION, generator: format!("onekernel-codegen {}", env!("CARGO_PKG_VERSION")), kernels: manifests };
    let mut json = serde_json::to_string_pretty(&manifest).unwrap_or_default();
    json.push('\n');
    out.files.insert("manifest.json".into(), json.into_bytes());
    Ok(out)
}
