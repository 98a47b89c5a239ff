//! Which loops get an unroll hint (docs/CODEGEN.md, "Unroll hints"): unit-step loops
//! with compile-time bounds — short literal ranges and spec-constant bounds — and no
//! others, in CUDA and GLSL; MSL gets none.

use onekernel_codegen::templates;
use onekernel_macros::kernel;

/// One loop of each kind, each writing a different constant so its place in the
/// generated source can be found.
#[kernel(workgroup = 32)]
pub fn loop_kinds(out: &mut [f32], #[push] n: u32, #[spec(default = 64)] dim: u32) {
    let t = local_id().x;
    let mut acc = [0.0; 8];
    for i in 0..8u32 {
        acc[i] = 11.0;
    }
    for i in 0..dim / 8 {
        acc[i % 8] += 22.0;
    }
    let mut s = 0.0;
    for i in 0..100u32 {
        s += (i as f32) * 33.0;
    }
    for i in 0..n {
        s += (i as f32) * 44.0;
    }
    for i in (0..8u32).step_by(2u32) {
        s += acc[i] * 55.0;
    }
    out[t] = s + acc[0];
}

/// Whether the innermost `for` before `marker` has `hint` on one of the two lines above
/// it (the hint follows the loop's `ok_end` constant).
fn hinted(src: &str, marker: &str, hint: &str) -> bool {
    let at = src.find(marker).unwrap_or_else(|| panic!("{marker} not in the source"));
    let head = &src[..at];
    let for_line = head.rfind("for (").expect("a loop before the marker");
    let before: Vec<&str> = head[..for_line].lines().rev().take(2).collect();
    before.iter().any(|l| l.trim() == hint)
}

#[test]
fn compile_time_unit_step_loops_are_hinted_and_no_others() {
    let k = &loop_kinds().unwrap();
    let cuda = templates::cuda(k).unwrap();
    let glsl = templates::glsl(k).unwrap();
    for (src, hint) in [(&cuda, "#pragma unroll"), (&glsl, "[[unroll]]")] {
        assert!(hinted(src, "11.0", hint), "0..8: literal, 8 trips\n{src}");
        assert!(hinted(src, "22.0", hint), "0..dim/8: spec-constant bound\n{src}");
        assert!(!hinted(src, "33.0", hint), "0..100: longer than MAX_UNROLLED_TRIPS");
        assert!(!hinted(src, "44.0", hint), "0..n: a push constant, known only at dispatch");
        assert!(!hinted(src, "55.0", hint), "step_by(2): not a unit step");
    }
    assert!(glsl.contains("#extension GL_EXT_control_flow_attributes : require"));
    assert_eq!(cuda.matches("#pragma unroll").count(), 2, "exactly the two compile-time loops");
    let msl = templates::msl(k).unwrap();
    assert!(!msl.contains("#pragma unroll") && !msl.contains("[[unroll]]"), "MSL gets no hint\n{msl}");
}
