//! NVRTC with its log kept: the runtime compiles each kernel for the device's real
//! architecture (`sm_90a` on Hopper), so NVRTC also runs ptxas, whose log says where it
//! lost performance around `wgmma` — a product it serialized or a wait it had to inject
//! (codes C7500–C7599, "Potential Performance Loss"). They change no result, only the
//! speed, and nothing else surfaces them: a kernel whose tile code meets one runs
//! correctly at a fraction of its speed (docs/PERFORMANCE.md, "Prefill attention", found
//! them behind several slower forms). The module itself is still loaded from the PTX, as
//! before, so what runs is unchanged.

use cudarc::nvrtc::result;
use std::ffi::{CStr, CString};

/// The lines of a ptxas log that report lost performance around `wgmma` (codes C75xx),
/// without the `ptxas info :` prefix, in order.
pub fn performance_warnings(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.contains("(C75"))
        .map(|l| {
            let l = l.trim();
            l.split_once(" : ").filter(|(head, _)| head.starts_with("ptxas")).map_or(l, |(_, rest)| rest).trim().to_string()
        })
        .collect()
}

/// Compiles the CUDA source `src` (named `name` in messages) with NVRTC and `options`;
/// returns the PTX and the compiler's log (warnings, and ptxas's messages where the
/// architecture is a real one), or the log as the error.
pub(super) fn compile(src: &str, name: &str, options: &[String]) -> Result<(String, String), String> {
    let text = |raw: Vec<std::ffi::c_char>| -> String {
        // SAFETY: NVRTC's log and PTX are NUL-terminated strings of their full size.
        unsafe { CStr::from_ptr(raw.as_ptr()) }.to_string_lossy().into_owned()
    };
    let src = CString::new(src).map_err(|e| e.to_string())?;
    let name = CString::new(name).map_err(|e| e.to_string())?;
    let prog = result::create_program(&src, Some(&name)).map_err(|e| format!("{e:?}"))?;
    // SAFETY: `prog` was created above and is destroyed once, at the end.
    let out = unsafe {
        let compiled = result::compile_program(prog, options);
        let log = result::get_program_log(prog).map(text).unwrap_or_default();
        match compiled {
            Err(e) => Err(format!("{e:?}: {log}")),
            Ok(()) => result::get_ptx(prog).map(|p| (text(p), log)).map_err(|e| format!("{e:?}")),
        }
    };
    // SAFETY: as above.
    unsafe { result::destroy_program(prog) }.map_err(|e| format!("{e:?}"))?;
    out
}

#[cfg(test)]
mod tests {
    use super::performance_warnings;

    #[test]
    fn only_the_lost_performance_lines_are_kept() {
        let log = "ptxas info    : 4 bytes gmem\n\
                   ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are serialized due to non wgmma instructions defining accumulator registers of a wgmma between start and end of the pipeline stage in the function 'k' in line 2840\n\
                   ptxas info    : Compiling entry function 'k' for 'sm_90a'\n\
                   ptxas info    : Used 217 registers, used 1 barriers, 512 bytes smem\n\
                   ptxas info    : (C7517) wgmma.wait_group is injected in around line 1497 by compiler to allow use of registers defined by GMMA in function 'k'\n";
        let w = performance_warnings(log);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].starts_with("(C7515) Potential Performance Loss"), "{w:?}");
        assert!(w[1].starts_with("(C7517) wgmma.wait_group is injected"), "{w:?}");
        // A log without them (a kernel whose products ptxas kept asynchronous) gives none.
        assert!(performance_warnings("ptxas info    : Used 224 registers, used 1 barriers\n").is_empty());
    }
}
