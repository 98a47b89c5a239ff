// onekernel helpers: each spells out the DSL meaning exactly (see docs/CODEGEN.md).
static inline float ok_min_f32(float a, float b) { return a < b ? a : b; }
static inline int ok_min_i32(int a, int b) { return a < b ? a : b; }
static inline uint ok_min_u32(uint a, uint b) { return a < b ? a : b; }
static inline float ok_max_f32(float a, float b) { return a > b ? a : b; }
static inline int ok_max_i32(int a, int b) { return a > b ? a : b; }
static inline uint ok_max_u32(uint a, uint b) { return a > b ? a : b; }
static inline float ok_clamp_f32(float x, float lo, float hi) { return ok_min_f32(ok_max_f32(x, lo), hi); }
static inline int ok_clamp_i32(int x, int lo, int hi) { return ok_min_i32(ok_max_i32(x, lo), hi); }
static inline uint ok_clamp_u32(uint x, uint lo, uint hi) { return ok_min_u32(ok_max_u32(x, lo), hi); }
static inline float ok_abs_f32(float x) { return as_type<float>(as_type<uint>(x) & 0x7fffffffu); }
static inline int ok_abs_i32(int x) { return x < 0 ? int(0u - uint(x)) : x; }
static inline uint ok_funnel_shr_u32(uint lo, uint hi, uint s) { uint k = s & 31u; return k == 0u ? lo : (lo >> k) | (hi << (32u - k)); }
static inline float ok_fma_f32(float a, float b, float c) { return metal::fma(a, b, c); }
static inline float ok_bf16_to_f32(uint h) { return as_type<float>((h & 0xffffu) << 16); }
static inline uint ok_f32_to_bf16(float f) {
    uint b = as_type<uint>(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) { return ((b >> 16) | 0x40u) & 0xffffu; }
    return ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) & 0xffffu;
}
static inline float ok_f16_to_f32(uint h) {
    uint sign = (h & 0x8000u) << 16;
    uint e = (h >> 10) & 0x1fu;
    uint m = h & 0x3ffu;
    if (e == 0u) {
        // Zero or subnormal half: m * 2^-24 is exact and normal in f32.
        return as_type<float>(as_type<uint>(float(m) * 5.9604644775390625e-8f) | sign);
    }
    if (e == 31u) { return as_type<float>(sign | (m != 0u ? (0x7fc00000u | (m << 13)) : 0x7f800000u)); }
    return as_type<float>(sign | ((e + 112u) << 23) | (m << 13));
}
static inline float ok_f16_hi_to_f32(uint w) { return ok_f16_to_f32(w >> 16); }
// f32 → binary16 bits, to nearest even (subnormal halves kept, ±inf from 65520 up, a
// NaN to the quiet NaN), without branches: with a branching form NVIDIA's Vulkan ran
// `attn_prefill_mma` 16 % slower (docs/PERFORMANCE.md, tried ideas); GLSL and MSL share
// this form. Normal halves round the f32 bits (adding 0xfff and the kept bit's parity
// carries into the exponent where it must); below 2^-14, |f| · 2^24 is exact and adding
// 2^23 rounds it to an integer, the subnormal half's bits, by the addition's own
// rounding to nearest even.
static inline uint ok_f32_to_f16(float f) {
    uint b = as_type<uint>(f);
    uint a = b & 0x7fffffffu;
    uint normal = ((a + 0x0fffu + ((a >> 13) & 1u)) >> 13) - 0x1c000u;
    uint sub = as_type<uint>(as_type<float>(a) * 16777216.0f + 8388608.0f) - 0x4b000000u;
    uint h = a < 0x38800000u ? sub : (a < 0x477ff000u ? normal : (a > 0x7f800000u ? 0x7e00u : 0x7c00u));
    return ((b >> 16) & 0x8000u) | h;
}
