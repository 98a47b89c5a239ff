//! The `msl-emu` backend: runs the generated Metal Shading Language on the CPU.
//!
//! Each variant's `.metal` file is compiled by clang as C++17 against
//! `metal_stdlib.h` (this module's header: the subset of MSL the templates use, with
//! invocations as fibers so barriers are real), together with an entry wrapper generated
//! from the manifest (buffers, push constants and built-ins bound to the kernel function's
//! parameters), into a shared object that is loaded and called. Compiled objects are
//! cached by the hash of everything that went into them. What this proves and what only
//! Apple hardware can: docs/RUNTIME.md ("msl-emu").

use crate::args::Args;
use crate::backend::{check_args, push_bytes, Backend, BackendError, DeviceInfo, Launch, LaunchStats};
use onekernel_dsl::manifest::KernelManifest;
use onekernel_dsl::types::Literal;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// The header the generated MSL is compiled against (installed as `metal_stdlib`).
pub const HEADER: &str = include_str!("metal_stdlib.h");

/// The C compiler and the flags every object is built with: no contraction and no fast
/// math (Metal's `MTLMathModeSafe`), wrapping signed arithmetic, position-independent.
const COMPILER: &str = "clang++";
const FLAGS: &[&str] =
    &["-std=c++17", "-O1", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", "-fwrapv", "-fno-strict-aliasing", "-w", "-x", "c++"];

/// The entry point every object exports.
const ENTRY: &[u8] = b"ok_emu_launch\0";

type LaunchFn = unsafe extern "C" fn(*const *mut u8, *const u8, *const u32, *mut u8, usize) -> i32;

/// Objects and their processes' globals are shared by every instance in the process, so
/// launches are serialized.
static LAUNCH_LOCK: Mutex<()> = Mutex::new(());

/// Compilations started by this process (for unique temporary names).
static COMPILES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The backend.
pub struct MslEmu {
    info: DeviceInfo,
    cache: PathBuf,
    loaded: HashMap<PathBuf, Arc<libloading::Library>>,
}

fn unavailable(reason: String) -> BackendError {
    BackendError::Unavailable { backend: "msl-emu", reason }
}

impl MslEmu {
    /// The emulator, compiling with `clang++` into a cache under the system's temporary
    /// directory; unavailable where there is no `clang++`.
    pub fn new() -> Result<Self, BackendError> {
        let version =
            Command::new(COMPILER).arg("--version").output().map_err(|e| unavailable(format!("no `{COMPILER}` to compile MSL as C++: {e}")))?;
        if !version.status.success() {
            return Err(unavailable(format!("`{COMPILER} --version` failed")));
        }
        let compiler = String::from_utf8_lossy(&version.stdout).lines().next().unwrap_or_default().to_string();
        let cache = std::env::temp_dir().join("onekernel-msl-emu");
        std::fs::create_dir_all(cache.join("include")).map_err(|e| unavailable(format!("cannot create {}: {e}", cache.display())))?;
        write_if_changed(&cache.join("include/metal_stdlib"), HEADER).map_err(|e| unavailable(format!("cannot write the MSL header: {e}")))?;
        let info = DeviceInfo {
            backend: "msl-emu".into(),
            device: "MSL as C++17 on the host CPU (fibers per threadgroup)".into(),
            driver: compiler,
            subgroup_size: None,
            denormals: "preserved (IEEE-754 on the host)".into(),
            fma: "std::fmaf (fused, one rounding)".into(),
            f16_widening: "by hand in the generated MSL".into(),
            async_copies: false,
            async_panels: false,
            max_shared_bytes: None,
            buffer_checks: "none (sizes checked before launch)".into(),
            validation: "none".into(),
        };
        Ok(MslEmu { info, cache, loaded: HashMap::new() })
    }

    /// The shared object of `l`'s variant, compiled if it is not cached yet.
    fn object(&mut self, l: &Launch) -> Result<Arc<libloading::Library>, BackendError> {
        let k = l.kernel;
        let api = |message: String| BackendError::Api { kernel: k.name.clone(), backend: "msl-emu", message };
        let metal = l.artifacts.join(&k.metal.source.path);
        let msl = std::fs::read_to_string(&metal).map_err(|e| BackendError::Artifact {
            kernel: k.name.clone(),
            path: metal.display().to_string(),
            source: e,
        })?;
        let defines = function_constants(k, l.spec);
        let wrapper = entry_wrapper(k);
        let key = fnv1a(&[HEADER, &msl, &defines.join(" "), &wrapper, &FLAGS.join(" ")]);
        let object = self.cache.join(format!("{}-{key:016x}.so", k.name));
        if let Some(lib) = self.loaded.get(&object) {
            return Ok(lib.clone());
        }
        if !object.exists() {
            // Unique names until the object is moved into place: other threads and
            // processes may compile the same variant at the same time.
            let unique = format!("{}.{}", std::process::id(), COMPILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            let source = self.cache.join(format!("{}-{key:016x}.{unique}.cpp", k.name));
            // The kernel file is included by path so that clang's messages name it.
            let text = format!("#include \"{}\"\n{wrapper}", metal.canonicalize().unwrap_or(metal.clone()).display());
            std::fs::write(&source, text).map_err(|e| api(format!("cannot write {}: {e}", source.display())))?;
            let partial = object.with_extension(format!("so.{unique}"));
            let out = Command::new(COMPILER)
                .args(FLAGS)
                .arg("-I")
                .arg(self.cache.join("include"))
                .arg("-include")
                .arg(self.cache.join("include/metal_stdlib"))
                .args(&defines)
                .arg(&source)
                .arg("-o")
                .arg(&partial)
                .output()
                .map_err(|e| api(format!("cannot run {COMPILER}: {e}")))?;
            if !out.status.success() {
                return Err(api(format!("{COMPILER} rejected {}:\n{}", metal.display(), String::from_utf8_lossy(&out.stderr))));
            }
            std::fs::rename(&partial, &object).map_err(|e| api(format!("cannot move {} into place: {e}", partial.display())))?;
            let _ = std::fs::remove_file(&source);
        }
        // SAFETY: the object was built from the generated MSL and the wrapper above; its
        // initializers only set constants.
        let lib = unsafe { libloading::Library::new(&object) }.map_err(|e| api(format!("cannot load {}: {e}", object.display())))?;
        let lib = Arc::new(lib);
        self.loaded.insert(object, lib.clone());
        Ok(lib)
    }
}

/// `-D` flags giving each function constant its value for this launch: `OK_FC_DEFINED_<id>`
/// 1 and `OK_FC_VALUE_<id>` where the launch sets it, else 0 (the default applies).
fn function_constants(k: &KernelManifest, spec: &[(String, Literal)]) -> Vec<String> {
    let mut out = Vec::new();
    for s in &k.spec_constants {
        match spec.iter().find(|(n, _)| *n == s.name) {
            Some((_, v)) => {
                let value = match *v {
                    Literal::Bool(b) => b.to_string(),
                    Literal::U32(x) => format!("{x}u"),
                    Literal::I32(x) => format!("({x})"),
                    // As a hexadecimal float literal: the exact value.
                    Literal::F32(bits) => format!("{:?}f", f32::from_bits(bits)),
                };
                out.push(format!("-DOK_FC_DEFINED_{}=1", s.id));
                out.push(format!("-DOK_FC_VALUE_{}={value}", s.id));
            }
            None => {
                out.push(format!("-DOK_FC_DEFINED_{}=0", s.id));
                out.push(format!("-DOK_FC_VALUE_{}=0", s.id));
            }
        }
    }
    out
}

/// The C++ entry point of kernel `k`: binds the buffers (in binding order), the push
/// block and the built-ins to the kernel function's parameters in the order the MSL
/// dialect declares them, and runs every threadgroup of the grid.
pub fn entry_wrapper(k: &KernelManifest) -> String {
    let [wx, wy, wz] = k.workgroup;
    let mut args: Vec<String> = (0..k.buffers.len()).map(|i| format!("ok_emu::Ptr{{ok_bufs[{i}]}}")).collect();
    if !k.push_constants.is_empty() {
        args.push("ok_emu::Ref{ok_push}".into());
    }
    args.extend(["metal::uint3{lx, ly, lz}", "ok_group", "ok_groups", &format!("metal::uint3{{{wx}u, {wy}u, {wz}u}}"), "(uint)i"].map(String::from));
    format!(
        r#"
// Entry wrapper of `{name}`, generated from the manifest by the msl-emu backend.
static void* const* ok_bufs;
static const void* ok_push;
static metal::uint3 ok_group, ok_groups;
static void ok_invocation(int i) {{
    uint lx = (uint)i % {wx}u, ly = ((uint)i / {wx}u) % {wy}u, lz = (uint)i / ({wx}u * {wy}u);
    {entry}({args});
}}
extern "C" int ok_emu_launch(void* const* bufs, const void* push, const uint* groups, char* err, size_t err_len) {{
    ok_bufs = bufs;
    ok_push = push;
    ok_groups = metal::uint3{{groups[0], groups[1], groups[2]}};
    for (uint z = 0; z < groups[2]; z++)
        for (uint y = 0; y < groups[1]; y++)
            for (uint x = 0; x < groups[0]; x++) {{
                ok_group = metal::uint3{{x, y, z}};
                int r = ok_emu::run_group({n}, ok_invocation);
                if (r == 1) {{
                    snprintf(err, err_len, "threadgroup (%u, %u, %u): invocations wait at a barrier that the others of their group never reach", x, y, z);
                    return r;
                }}
                if (r != 0) {{
                    snprintf(err, err_len, "threadgroup (%u, %u, %u): out of memory for the invocations' stacks", x, y, z);
                    return r;
                }}
            }}
    return 0;
}}
"#,
        name = k.name,
        entry = k.metal.entry,
        n = wx * wy * wz,
        args = args.join(", ")
    )
}

fn write_if_changed(path: &Path, text: &str) -> std::io::Result<()> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    let partial = path.with_extension(format!("{}.{}", std::process::id(), COMPILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed)));
    std::fs::write(&partial, text)?;
    std::fs::rename(partial, path)
}

/// FNV-1a over the parts, each followed by a separator byte.
fn fnv1a(parts: &[&str]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in p.bytes().chain([0xff]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

impl Backend for MslEmu {
    fn name(&self) -> &'static str {
        "msl-emu"
    }

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn launch(&mut self, l: &Launch, args: &mut Args) -> Result<LaunchStats, BackendError> {
        check_args("msl-emu", l, args)?;
        let k = l.kernel;
        let lib = self.object(l)?;
        let push = push_bytes(k, args);
        // Buffers in binding order, each the host buffer itself (written in place).
        let mut ptrs: Vec<*mut u8> = Vec::with_capacity(k.buffers.len());
        for b in &k.buffers {
            match args.get_buffer_mut(&b.name) {
                Some(h) => ptrs.push(h.as_bytes_mut().as_mut_ptr()),
                None => {
                    return Err(BackendError::Arguments {
                        kernel: k.name.clone(),
                        backend: "msl-emu",
                        message: format!("buffer `{}` is missing", b.name),
                    })
                }
            }
        }
        let _serial = LAUNCH_LOCK.lock().unwrap_or_else(|p| p.into_inner());
        let api = |message: String| BackendError::Api { kernel: k.name.clone(), backend: "msl-emu", message };
        // SAFETY: the symbol has the wrapper's signature; every pointer outlives the
        // call; the buffers' lengths were checked against the kernel's declarations.
        let run: libloading::Symbol<LaunchFn> = unsafe { lib.get(ENTRY) }.map_err(|e| api(format!("no entry point: {e}")))?;
        let mut err = vec![0u8; 512];
        let rc = unsafe { run(ptrs.as_ptr(), push.as_ptr(), l.groups.as_ptr(), err.as_mut_ptr(), err.len()) };
        if rc != 0 {
            let end = err.iter().position(|&b| b == 0).unwrap_or(err.len());
            return Err(api(String::from_utf8_lossy(&err[..end]).into_owned()));
        }
        Ok(LaunchStats { device_ns: None })
    }
}
