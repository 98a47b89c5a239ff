// onekernel msl-emu: the subset of the Metal Shading Language that onekernel's generated
// MSL uses, as C++17, so a generated .metal file compiles with clang on Linux and runs on
// the CPU. What each piece means under Metal's rules, and what only Apple hardware can
// prove, is in docs/RUNTIME.md ("msl-emu").
//
// * Address spaces: `device` is ordinary memory, `constant` is `const`, and a
//   `threadgroup` array declared in a kernel is a function-local `static`: every
//   invocation of a threadgroup runs the same function on its own fiber, so the array is
//   shared by them; threadgroups run one after another, never at once.
// * Invocations are fibers (ucontext). `threadgroup_barrier` suspends the calling fiber
//   until every invocation of its threadgroup has reached a barrier, `simdgroup_barrier`
//   until every invocation of its SIMD group (32 consecutive invocations, Apple GPUs'
//   width) has reached one; between barriers
//   fibers run one at a time in invocation order, so a missing barrier shows up as an
//   invocation reading what another has not written yet. A threadgroup in which some
//   invocations finish while others wait at a barrier is reported as an error.
// * Function constants come through `OK_FUNCTION_CONSTANT`, given their values at
//   compile time (`-DOK_FC_DEFINED_<id>=0|1 -DOK_FC_VALUE_<id>=v`), as a Metal pipeline
//   specializes them.
// * Arithmetic is IEEE-754 binary32 with round-to-nearest-even, compiled without
//   contraction (-ffp-contract=off) and without fast math; `fma` is the correctly
//   rounded fused multiply-add; subnormals are kept.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ucontext.h>

#define device
#define kernel
#define constant const
#define threadgroup static

typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned char uchar;

namespace metal {
struct uint2 { uint x, y; };
struct uint3 { uint x, y, z; };
struct alignas(16) uint4 { uint x, y, z, w; };
struct int2 { int x, y; };
struct alignas(16) int4 { int x, y, z, w; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
enum class mem_flags { mem_none, mem_device, mem_threadgroup };

template <typename T, typename U> inline T as_type(U u) {
    static_assert(sizeof(T) == sizeof(U), "as_type needs equal sizes");
    T t;
    std::memcpy(&t, &u, sizeof(T));
    return t;
}
inline float fma(float a, float b, float c) { return std::fmaf(a, b, c); }
inline uint popcount(uint x) { return (uint)__builtin_popcount(x); }
inline int popcount(int x) { return __builtin_popcount((uint)x); }
namespace fast {
// The hardware exponential of a `fast` kernel: an approximation on Apple GPUs; here the
// C library's, validated like every `fast` result by its NMSE bound.
inline float exp(float x) { return std::exp(x); }
inline float exp2(float x) { return std::exp2(x); }
}  // namespace fast
void threadgroup_barrier(mem_flags);
void simdgroup_barrier(mem_flags);
}  // namespace metal

#define is_function_constant_defined(x) false
#define OK_FUNCTION_CONSTANT(T, name, id, dflt) \
    static const T name##_v = (OK_FC_DEFINED_##id) ? (T)(OK_FC_VALUE_##id) : (T)(dflt);

namespace ok_emu {
enum State { RUNNABLE, AT_BARRIER, AT_SIMD_BARRIER, DONE };
// Invocations per SIMD group.
static const int SIMD = 32;
struct Fiber {
    ucontext_t ctx;
    State state;
};
static ucontext_t scheduler;
static Fiber* fibers = nullptr;
static char* stacks = nullptr;
static int capacity = 0;
static int current = 0;
static void (*body)(int) = nullptr;
// Bytes of stack per invocation: kernels keep arrays of up to a few hundred words.
static const size_t STACK = 128 * 1024;

static void entry() {
    body(current);
    fibers[current].state = DONE;
    swapcontext(&fibers[current].ctx, &scheduler);
}

inline void wait(State s) {
    fibers[current].state = s;
    swapcontext(&fibers[current].ctx, &scheduler);
}

// Runs one threadgroup of `n` invocations of `f` to completion. 0 on success; 1 when some
// invocations finished or waited at other barriers while others waited at a barrier (no
// invocation could go on); 2 when memory ran out.
static int run_group(int n, void (*f)(int)) {
    if (n > capacity) {
        std::free(fibers);
        std::free(stacks);
        fibers = (Fiber*)std::calloc((size_t)n, sizeof(Fiber));
        stacks = (char*)std::malloc((size_t)n * STACK);
        if (!fibers || !stacks) {
            capacity = 0;
            return 2;
        }
        capacity = n;
    }
    body = f;
    for (int i = 0; i < n; i++) {
        getcontext(&fibers[i].ctx);
        fibers[i].ctx.uc_stack.ss_sp = stacks + (size_t)i * STACK;
        fibers[i].ctx.uc_stack.ss_size = STACK;
        fibers[i].ctx.uc_link = &scheduler;
        makecontext(&fibers[i].ctx, entry, 0);
        fibers[i].state = RUNNABLE;
    }
    for (;;) {
        for (int i = 0; i < n; i++) {
            if (fibers[i].state == RUNNABLE) {
                current = i;
                swapcontext(&scheduler, &fibers[i].ctx);
            }
        }
        int done = 0, at_group = 0;
        for (int i = 0; i < n; i++) {
            done += fibers[i].state == DONE;
            at_group += fibers[i].state == AT_BARRIER;
        }
        if (done == n) return 0;
        bool released = false;
        // A SIMD group whose invocations all wait at a SIMD-group barrier goes on.
        for (int s0 = 0; s0 < n; s0 += SIMD) {
            int end = s0 + SIMD < n ? s0 + SIMD : n;
            bool all = true;
            for (int i = s0; i < end; i++) all = all && fibers[i].state == AT_SIMD_BARRIER;
            if (all) {
                for (int i = s0; i < end; i++) fibers[i].state = RUNNABLE;
                released = true;
            }
        }
        if (released) continue;
        if (at_group == n) {
            for (int i = 0; i < n; i++) fibers[i].state = RUNNABLE;
            continue;
        }
        // Some invocations finished or wait at another kind of barrier: none can go on.
        return 1;
    }
}

// A buffer argument: converts to whatever pointer type the kernel's parameter has.
struct Ptr {
    void* p;
    template <typename T> operator T*() const { return static_cast<T*>(p); }
};
// The push-constant block: converts to a reference to the kernel's push struct.
struct Ref {
    const void* p;
    template <typename T> operator const T&() const { return *static_cast<const T*>(p); }
};
}  // namespace ok_emu

inline void metal::threadgroup_barrier(mem_flags) { ok_emu::wait(ok_emu::AT_BARRIER); }

// Atomics and device-scope fences (`last_arrival`). Threadgroups run one after another
// and a group's fibers switch only at barriers, so a plain read-modify-write is atomic
// and every write is visible to the next threadgroup: the fences have nothing to order.
#define coherent(x)
namespace metal {
enum memory_order { memory_order_relaxed, memory_order_seq_cst };
enum thread_scope { thread_scope_thread, thread_scope_simdgroup, thread_scope_threadgroup, thread_scope_device };
struct atomic_uint {
    uint v;
};
inline uint atomic_fetch_add_explicit(atomic_uint* a, uint x, memory_order) {
    const uint old = a->v;
    a->v = old + x;
    return old;
}
inline void atomic_store_explicit(atomic_uint* a, uint x, memory_order) { a->v = x; }
inline void atomic_thread_fence(mem_flags, memory_order, thread_scope) {}
}  // namespace metal
inline void metal::simdgroup_barrier(mem_flags) { ok_emu::wait(ok_emu::AT_SIMD_BARRIER); }

namespace ok_emu {
// Each invocation's value offered to a shuffle (threadgroups of at most 1024).
static float shuffled[1024];
}  // namespace ok_emu
namespace metal {
// The value of lane `lane ^ mask` of the SIMD group: every invocation offers its own,
// meets the others at a SIMD-group barrier, reads its partner's, and meets them again
// before any can offer the next.
inline float simd_shuffle_xor(float v, ushort mask) {
    ok_emu::shuffled[ok_emu::current] = v;
    ok_emu::wait(ok_emu::AT_SIMD_BARRIER);
    const float r = ok_emu::shuffled[ok_emu::current ^ (int)mask];
    ok_emu::wait(ok_emu::AT_SIMD_BARRIER);
    return r;
}
}  // namespace metal

// SIMD-group matrices (`simdgroup_matrix`, the register tiles of docs/DSL.md): every
// invocation of the SIMD group holds the whole 8 × 8 matrix and computes every operation
// on it, so all 32 copies stay equal. A load and a store are one instruction of the whole
// SIMD group on the GPU; here each fiber does its own, so every load ends and every
// store starts with a SIMD-group barrier: no invocation stores before all have loaded. Values are held as float (half widened
// exactly); a product-accumulate is one fmaf per product in order of the inner index.
#define thread
#define OK_MSL_EMU 1
typedef unsigned long ulong;
namespace metal {
struct ulong2 {
    ulong x, y;
    ulong2(ulong a, ulong b) : x(a), y(b) {}
};
// An IEEE binary16 value: converts to float exactly, from float to nearest even (as
// Metal's `half(x)`).
struct half {
    ushort bits;
    half() = default;
    explicit half(float x) {
        uint b;
        std::memcpy(&b, &x, 4);
        const uint sign = (b >> 16) & 0x8000u, m = b & 0x7fffffu;
        const int e = (int)((b >> 23) & 255u) - 127 + 15;
        if (((b >> 23) & 255u) == 255u) {
            bits = (ushort)(sign | (m ? 0x7e00u : 0x7c00u));
        } else if (e >= 31) {
            bits = (ushort)(sign | 0x7c00u);
        } else if (e <= 0) {
            // Subnormal or zero: the significand shifted right, rounded to nearest even.
            if (e < -10) {
                bits = (ushort)sign;
            } else {
                const uint full = m | 0x800000u, shift = (uint)(14 - e);
                const uint h = full >> shift, rem = full & ((1u << shift) - 1u), mid = 1u << (shift - 1u);
                bits = (ushort)(sign | (h + (rem > mid || (rem == mid && (h & 1u)))));
            }
        } else {
            const uint h = ((uint)e << 10) | (m >> 13), rem = m & 0x1fffu;
            // A carry out of the significand raises the exponent (up to infinity).
            bits = (ushort)(sign | (h + (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))));
        }
    }
    operator float() const {
        const uint s = (uint)(bits >> 15) << 31, e = (bits >> 10) & 31u, m = bits & 1023u;
        float f;
        if (e == 0) {
            f = std::ldexp((float)m, -24);
            return s ? -f : f;
        }
        const uint b = e == 31 ? (s | 0x7f800000u | (m << 13)) : (s | ((e + 112u) << 23) | (m << 13));
        std::memcpy(&f, &b, 4);
        return f;
    }
};
template <typename T, int C, int R> struct simdgroup_matrix {
    float e[R][C];
    simdgroup_matrix() = default;
    // The diagonal matrix with `d` on its diagonal.
    explicit simdgroup_matrix(T d) {
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++) e[r][c] = r == c ? (float)d : 0.0f;
    }
};
typedef simdgroup_matrix<half, 8, 8> simdgroup_half8x8;
typedef simdgroup_matrix<float, 8, 8> simdgroup_float8x8;
template <typename T, int C, int R> inline simdgroup_matrix<T, C, R> make_filled_simdgroup_matrix(T v) {
    simdgroup_matrix<T, C, R> m;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) m.e[r][c] = (float)v;
    return m;
}
// Element (r, c) is src[(origin.y + r)·stride + origin.x + c], or transposed
// src[(origin.x + c)·stride + origin.y + r].
template <typename T, int C, int R, typename S>
inline void simdgroup_load(simdgroup_matrix<T, C, R>& d, const S* src, ulong stride, ulong2 origin, bool transpose) {
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            d.e[r][c] = transpose ? (float)src[(origin.x + c) * stride + origin.y + r] : (float)src[(origin.y + r) * stride + origin.x + c];
    ok_emu::wait(ok_emu::AT_SIMD_BARRIER);
}
template <int C, int R>
inline void simdgroup_store(const simdgroup_matrix<float, C, R>& s, float* dst, ulong stride, ulong2 origin, bool transpose) {
    ok_emu::wait(ok_emu::AT_SIMD_BARRIER);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++) {
            float& at = transpose ? dst[(origin.x + c) * stride + origin.y + r] : dst[(origin.y + r) * stride + origin.x + c];
            at = s.e[r][c];
        }
}
template <typename TD, typename TA, typename TB, typename TC, int C, int R, int K>
inline void simdgroup_multiply_accumulate(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, K, R>& a, const simdgroup_matrix<TB, C, K>& b,
                                          const simdgroup_matrix<TC, C, R>& c) {
    simdgroup_matrix<TD, C, R> out;
    for (int r = 0; r < R; r++)
        for (int j = 0; j < C; j++) {
            float s = c.e[r][j];
            for (int k = 0; k < K; k++) s = std::fmaf(a.e[r][k], b.e[k][j], s);
            out.e[r][j] = s;
        }
    d = out;
}
template <typename TD, typename TA, typename TB, int C, int R, int K>
inline void simdgroup_multiply(simdgroup_matrix<TD, C, R>& d, const simdgroup_matrix<TA, K, R>& a, const simdgroup_matrix<TB, C, K>& b) {
    simdgroup_multiply_accumulate(d, a, b, make_filled_simdgroup_matrix<TD, C, R>((TD)0.0f));
}
}  // namespace metal
// Operand memory as half values (Metal casts between address spaces; C++ has none).
inline metal::half* ok_tile_halves_tg(uint* p) { return reinterpret_cast<metal::half*>(p); }
inline const metal::half* ok_tile_halves_ro(const uint* p) { return reinterpret_cast<const metal::half*>(p); }
inline metal::half* ok_tile_halves_rw(uint* p) { return reinterpret_cast<metal::half*>(p); }
