//! `f16_bits_to_f32(w >> 16)` and `f16_bits_to_f32(w & 65535)` read the half in place
//! (docs/CODEGEN.md, "Half-precision widening"): one conversion instruction on NVIDIA
//! instead of a shift or mask and a conversion. Other arguments keep the general helper.
//! Bit-exactness of the helpers is checked by `validate` (attention's all-subnormal V
//! case widens both halves of every word on every backend).

use onekernel_codegen::templates;
use onekernel_macros::kernel;

#[kernel(workgroup = 32)]
pub fn halves(w: &[u32], out: &mut [f32]) {
    let t = local_id().x;
    let x = w[t];
    out[4 * t] = f16_bits_to_f32(x >> 16);
    out[4 * t + 1] = f16_bits_to_f32(x & 65535);
    // Not a whole half: a shift by 8 and a narrower mask keep the general helper.
    out[4 * t + 2] = f16_bits_to_f32(x >> 8);
    out[4 * t + 3] = f16_bits_to_f32(x & 255);
}

#[test]
fn whole_halves_of_a_word_are_widened_in_place_and_nothing_else() {
    let k = &halves().unwrap();
    for src in [templates::cuda(k).unwrap(), templates::glsl(k).unwrap(), templates::msl(k).unwrap()] {
        // The kernel body: after the last helper definition.
        let body = &src[src.find("x_1").unwrap_or_else(|| panic!("no local x_1\n{src}"))..];
        assert!(body.contains("= ok_f16_hi_to_f32(x_1);"), "`>> 16`: the high half in place\n{src}");
        assert!(body.contains("= ok_f16_to_f32(x_1);"), "`& 65535`: the low half, mask dropped\n{src}");
        assert!(body.contains("= ok_f16_to_f32((x_1 >> 8u));"), "a shift by 8 keeps the general helper\n{src}");
        assert!(body.contains("= ok_f16_to_f32((x_1 & 255u));"), "a narrower mask keeps the general helper\n{src}");
        assert_eq!(body.matches("ok_f16_hi_to_f32(").count(), 1, "only the `>> 16` conversion\n{src}");
    }
}
