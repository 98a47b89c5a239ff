// onekernel helpers: each spells out the DSL meaning exactly (see docs/CODEGEN.md).
float ok_min_f32(float a, float b) { return a < b ? a : b; }
int ok_min_i32(int a, int b) { return a < b ? a : b; }
uint ok_min_u32(uint a, uint b) { return a < b ? a : b; }
float ok_max_f32(float a, float b) { return a > b ? a : b; }
int ok_max_i32(int a, int b) { return a > b ? a : b; }
uint ok_max_u32(uint a, uint b) { return a > b ? a : b; }
float ok_clamp_f32(float x, float lo, float hi) { return ok_min_f32(ok_max_f32(x, lo), hi); }
int ok_clamp_i32(int x, int lo, int hi) { return ok_min_i32(ok_max_i32(x, lo), hi); }
uint ok_clamp_u32(uint x, uint lo, uint hi) { return ok_min_u32(ok_max_u32(x, lo), hi); }
float ok_abs_f32(float x) { return uintBitsToFloat(floatBitsToUint(x) & 0x7fffffffu); }
int ok_abs_i32(int x) { return x < 0 ? -x : x; }
uint ok_funnel_shr_u32(uint lo, uint hi, uint s) { uint k = s & 31u; return k == 0u ? lo : (lo >> k) | (hi << (32u - k)); }
float ok_bf16_to_f32(uint h) { return uintBitsToFloat((h & 0xffffu) << 16); }
uint ok_f32_to_bf16(float f) {
    uint b = floatBitsToUint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) { return ((b >> 16) | 0x40u) & 0xffffu; }
    return ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) & 0xffffu;
}
float ok_f16_to_f32(uint h) {
    // Subnormal halves by hand (m * 2^-24 is exact and normal in f32) unless the device's
    // conversion is known to be exact, since a driver that flushes denormals may flush
    // them in the conversion; the rest converts exactly in hardware (NaN payloads are
    // outside the contract, docs/DSL.md).
    if (!ok_f16_unpack_exact && (h & 0x7c00u) == 0u) {
        return uintBitsToFloat(floatBitsToUint(float(h & 0x3ffu) * 5.9604644775390625e-8) | ((h & 0x8000u) << 16));
    }
    return unpackHalf2x16(h & 0xffffu).x;
}
float ok_f16_hi_to_f32(uint w) {
    // ok_f16_to_f32(w >> 16), reading the high half in place.
    if (!ok_f16_unpack_exact && (w & 0x7c000000u) == 0u) {
        return uintBitsToFloat(floatBitsToUint(float((w >> 16) & 0x3ffu) * 5.9604644775390625e-8) | (w & 0x80000000u));
    }
    return unpackHalf2x16(w).y;
}
// f32 → binary16 bits, to nearest even (subnormal halves kept, ±inf from 65520 up, a
// NaN to the quiet NaN), without branches: with a branching form NVIDIA's Vulkan ran
// `attn_prefill_mma` 16 % slower (docs/PERFORMANCE.md, tried ideas); GLSL and MSL share
// this form. Normal halves round the f32 bits (adding 0xfff and the kept bit's parity
// carries into the exponent where it must); below 2^-14, |f| · 2^24 is exact and adding
// 2^23 rounds it to an integer, the subnormal half's bits, by the addition's own
// rounding to nearest even.
uint ok_f32_to_f16(float f) {
    uint b = floatBitsToUint(f);
    uint a = b & 0x7fffffffu;
    uint normal = ((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - 0x1c000u;
    uint sub = floatBitsToUint(uintBitsToFloat(a) * 16777216.0 + 8388608.0) - 0x4b000000u;
    uint h = a < 0x38800000u ? sub : (a < 0x477ff000u ? normal : (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    return ((b >> 16) & 0x8000u) | h;
}
