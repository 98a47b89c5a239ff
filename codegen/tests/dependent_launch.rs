//! Programmatic dependent launch (docs/RUNTIME.md): from sm_90 the CUDA runtime starts a
//! sequence's later kernel (the decode step's combine) while the kernel before it
//! drains, which is safe only because every generated entry first waits for that
//! kernel's writes (`griddepcontrol.wait`, a no-op for a kernel launched the ordinary
//! way). This checks every generated CUDA file: the wait is the body's first statement,
//! before any buffer is touched. The GPU machine's `decode_step` suite runs the launch.

use std::path::Path;

#[test]
fn every_cuda_entry_waits_for_the_kernel_before_it_first() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../generated/cuda");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "cu")).collect();
    files.sort();
    assert!(files.len() >= 10, "the catalogue's CUDA files: {files:?}");
    for path in &files {
        let src = std::fs::read_to_string(path).unwrap();
        let name = path.display();
        // The helper: the PTX instruction, only where it exists.
        let helper =
            src.split("static __device__ __forceinline__ void ok_grid_dependency_wait() {\n").nth(1).unwrap_or_else(|| panic!("{name}: no helper"));
        assert!(
            helper.starts_with(
                "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n    asm volatile(\"griddepcontrol.wait;\" ::: \"memory\");\n#endif\n}"
            ),
            "{name}: {helper:.200}"
        );
        // One kernel body per file (the entries of its instances call it).
        assert_eq!(src.matches("ok_grid_dependency_wait();").count(), 1, "{name}");
        let body = src
            .split("_impl(")
            .nth(1)
            .or_else(|| src.split("extern \"C\" __global__ void").nth(1))
            .unwrap_or_else(|| panic!("{name}: no kernel body"));
        let first = body.split_once(") {\n").unwrap_or_else(|| panic!("{name}: no body")).1;
        // Before the wait only spec constants are unpacked; nothing is read or written.
        let before = first.split("    ok_grid_dependency_wait();\n").next().unwrap();
        assert!(
            before.lines().all(|l| l.starts_with("    const float ") && l.contains("__uint_as_float(")),
            "{name}: statements before the wait: {before}"
        );
        assert!(first.contains("    ok_grid_dependency_wait();\n    const unsigned int ok_lindex = "), "{name}");
    }
}
