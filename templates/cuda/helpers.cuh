// onekernel helpers: each spells out the DSL meaning exactly (see docs/CODEGEN.md).
static __device__ __forceinline__ float ok_min_f32(float a, float b) { return a < b ? a : b; }
static __device__ __forceinline__ int ok_min_i32(int a, int b) { return a < b ? a : b; }
static __device__ __forceinline__ unsigned int ok_min_u32(unsigned int a, unsigned int b) { return a < b ? a : b; }
static __device__ __forceinline__ float ok_max_f32(float a, float b) { return a > b ? a : b; }
// `fast_exp`: e^x as ex2.approx.ftz of x·log2(e) (results below 2^-126 are zero).
static __device__ __forceinline__ float ok_fast_exp(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f)); return y; }
// `fast_exp2`: 2^x as ex2.approx.ftz (results below 2^-126 are zero).
static __device__ __forceinline__ float ok_fast_exp2(float x) { float y; asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x)); return y; }
static __device__ __forceinline__ int ok_max_i32(int a, int b) { return a > b ? a : b; }
static __device__ __forceinline__ unsigned int ok_max_u32(unsigned int a, unsigned int b) { return a > b ? a : b; }
static __device__ __forceinline__ float ok_clamp_f32(float x, float lo, float hi) { return ok_min_f32(ok_max_f32(x, lo), hi); }
static __device__ __forceinline__ int ok_clamp_i32(int x, int lo, int hi) { return ok_min_i32(ok_max_i32(x, lo), hi); }
static __device__ __forceinline__ unsigned int ok_clamp_u32(unsigned int x, unsigned int lo, unsigned int hi) { return ok_min_u32(ok_max_u32(x, lo), hi); }
static __device__ __forceinline__ float ok_abs_f32(float x) { return __uint_as_float(__float_as_uint(x) & 0x7fffffffu); }
static __device__ __forceinline__ int ok_abs_i32(int x) { return x < 0 ? (int)(0u - (unsigned int)x) : x; }
static __device__ __forceinline__ float ok_fma_f32(float a, float b, float c) { return fmaf(a, b, c); }
static __device__ __forceinline__ unsigned int ok_funnel_shr_u32(unsigned int lo, unsigned int hi, unsigned int s) { return __funnelshift_r(lo, hi, s); }
static __device__ __forceinline__ float ok_bf16_to_f32(unsigned int h) { return __uint_as_float((h & 0xffffu) << 16); }
static __device__ __forceinline__ unsigned int ok_f32_to_bf16(float f) {
    unsigned int b = __float_as_uint(f);
    if ((b & 0x7fffffffu) > 0x7f800000u) { return ((b >> 16) | 0x40u) & 0xffffu; }
    return ((b + 0x7fffu + ((b >> 16) & 1u)) >> 16) & 0xffffu;
}
static __device__ __forceinline__ float ok_f16_to_f32(unsigned int h) {
    // The hardware conversion is exact for every finite half and for infinities: one
    // instruction instead of a dozen (NaN payloads are outside the contract, docs/DSL.md).
    float x;
    asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"((unsigned short)(h & 0xffffu)));
    return x;
}
static __device__ __forceinline__ float ok_f16_hi_to_f32(unsigned int w) {
    // The high half of the word, converted without a shift (a register-half operand).
    float x;
    asm("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, %1; cvt.f32.f16 %0, hi; }" : "=f"(x) : "r"(w));
    return x;
}
// async_copy / async_commit / async_wait (docs/DSL.md): cp.async from global to shared
// memory, 4, 8 or 16 bytes; the DSL requires aligned indices (the interpreter checks
// them). Before sm_80 the copies are synchronous and waiting is a no-op. `async_copy`
// allocates in L1 (`.ca`): for 16 bytes, `.cg` (L2 only) left a third of the sectors the
// tensor-core decode step streams counted as L2 hits and the step 3-4 % slower on an
// H100 (docs/PERFORMANCE.md, "Decode attention"). `async_copy_bypass_l1` is the 16-byte
// `.cg` (3 % off the prefill step on the H200, whose blocks every workgroup reads from L2).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
#define OK_ASYNC_COPY(BYTES) \
    static __device__ __forceinline__ void ok_async_copy##BYTES(void* dst, const void* src) { \
        asm volatile("cp.async.ca.shared.global [%0], [%1], " #BYTES ";" \
                     :: "r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src) : "memory"); \
    }
OK_ASYNC_COPY(4)
OK_ASYNC_COPY(8)
OK_ASYNC_COPY(16)
static __device__ __forceinline__ void ok_async_copy16_past_l1(void* dst, const void* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src) : "memory");
}
static __device__ __forceinline__ void ok_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> static __device__ __forceinline__ void ok_async_wait() { asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory"); }
#else
static __device__ __forceinline__ void ok_async_copy4(void* dst, const void* src) { *(unsigned int*)dst = *(const unsigned int*)src; }
static __device__ __forceinline__ void ok_async_copy8(void* dst, const void* src) { *(uint2*)dst = *(const uint2*)src; }
static __device__ __forceinline__ void ok_async_copy16(void* dst, const void* src) { *(uint4*)dst = *(const uint4*)src; }
static __device__ __forceinline__ void ok_async_copy16_past_l1(void* dst, const void* src) { *(uint4*)dst = *(const uint4*)src; }
static __device__ __forceinline__ void ok_async_commit() {}
template <int N> static __device__ __forceinline__ void ok_async_wait() {}
#endif
// Programmatic dependent launch (docs/RUNTIME.md): from sm_90 the runtime may start a
// sequence's later kernel while the one before drains; every entry first waits until
// that kernel has completed and its writes are visible. A no-op for a kernel launched
// the ordinary way, and before sm_90.
static __device__ __forceinline__ void ok_grid_dependency_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
// f32 → binary16 bits as the DSL rounds (to nearest even, subnormal halves kept, ±inf
// past the largest half; a NaN stays a NaN, its payload not part of the contract): one
// `cvt.rn.f16.f32`, where the same rounding in integer steps took a dozen instructions.
static __device__ __forceinline__ unsigned int ok_f32_to_f16(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return (unsigned int)h;
}
