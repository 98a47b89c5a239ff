// Register tiles (docs/DSL.md, "Register tiles"): each warp's 16 × 16 tiles are the
// fragments of mma.sync m16n8k16 (PTX ISA, "Matrix fragments for mma.m16n8k16"), lane
// = 4·g + t. An A tile is four registers of f16 pairs: (row g, columns 2t, 2t + 1),
// (row g + 8, the same), (row g, columns 2t + 8, 2t + 9), (row g + 8, the same). A B
// tile is two 16 × 8 halves of two registers each: (rows 2t, 2t + 1, column g) and (rows
// 2t + 8, 2t + 9, column g), the second half at columns 8–15. An accumulator tile is two
// 16 × 8 halves of four f32: (g, 2t), (g, 2t + 1), (g + 8, 2t), (g + 8, 2t + 1). Indices
// and strides count f16 values (operands) or f32 values (accumulators); the DSL's group
// of 32 consecutive local linear indices is a warp.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#error "register tiles need mma.sync m16n8k16 with f32 accumulators: sm_80 or newer"
#endif

static __device__ __forceinline__ void ok_tile_fill(float* c, float v) {
#pragma unroll
    for (int i = 0; i < 8; i++) { c[i] = v; }
}

static __device__ __forceinline__ void ok_tile_scale(float* c, float v) {
#pragma unroll
    for (int i = 0; i < 8; i++) { c[i] = c[i] * v; }
}

static __device__ __forceinline__ void ok_tile_mma(float* c, const unsigned int* a, const unsigned int* b) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { %0, %1, %2, %3}, { %4, %5, %6, %7}, { %8, %9}, { %0, %1, %2, %3};"
                     : "+f"(c[4 * h]), "+f"(c[4 * h + 1]), "+f"(c[4 * h + 2]), "+f"(c[4 * h + 3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[2 * h]), "r"(b[2 * h + 1]));
    }
}

// One ldmatrix.x4 into `f` from the shared-memory address each lane gives (`.trans`:
// each 8 × 8 matrix transposed).
template <bool TRANS>
static __device__ __forceinline__ void ok_ldmatrix_x4(unsigned int* f, unsigned int addr) {
    if (TRANS) {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %0, %1, %2, %3}, [%4];"
                     : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3]) : "r"(addr) : "memory");
    } else {
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %0, %1, %2, %3}, [%4];"
                     : "=r"(f[0]), "=r"(f[1]), "=r"(f[2]), "=r"(f[3]) : "r"(addr) : "memory");
    }
}

// An operand tile from shared memory with one ldmatrix.x4: lane 8m + r gives the address
// of row r of 8 × 8 matrix m. A's matrices are (rows 0–7, k 0–7), (rows 8–15, k 0–7),
// (rows 0–7, k 8–15), (rows 8–15, k 8–15); B's are (k 0–7, n 0–7), (k 8–15, n 0–7),
// (k 0–7, n 8–15), (k 8–15, n 8–15). Where the memory's rows are the fragment's
// columns (A by columns, B by rows) the matrices are read transposed.
template <bool B, bool COL>
static __device__ __forceinline__ void ok_tile_ldmatrix(unsigned int* f, const unsigned int* arr, unsigned int index, unsigned int stride, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, m = lane >> 3, r = lane & 7u;
    // The block's (row, column) in the tile, then the half index of memory row r.
    const unsigned int bi = B ? 8u * (m & 1u) : 8u * (m & 1u), bj = 8u * (m >> 1);
    // A: bi rows, bj k. B: bi k, bj n.
    constexpr bool trans = B ? !COL : COL;
    unsigned int h;
    if (!trans) {
        // Memory rows are the fragment's rows: A by rows (row bi + r), B by columns (n bj + r).
        h = B ? index + (bj + r) * stride + bi : index + (bi + r) * stride + bj;
    } else {
        // Memory rows are the fragment's columns: A by columns (k bj + r), B by rows (k bi + r).
        h = B ? index + (bi + r) * stride + bj : index + (bj + r) * stride + bi;
    }
    ok_ldmatrix_x4<trans>(f, (unsigned int)__cvta_generic_to_shared(arr) + 2u * h);
}

// f16 value h of an array of f16 pairs.
static __device__ __forceinline__ unsigned int ok_tile_half(const unsigned int* arr, unsigned int h) {
    return (arr[h >> 1] >> (16u * (h & 1u))) & 0xffffu;
}

// An operand tile from any memory, each lane reading its own pairs.
template <bool B, bool COL>
static __device__ __forceinline__ void ok_tile_load_f16(unsigned int* f, const unsigned int* arr, unsigned int index, unsigned int stride, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, g = lane >> 2, t = lane & 3u;
#pragma unroll
    for (unsigned int q = 0; q < 4u; q++) {
        // A: register q holds (row g + 8(q & 1), k 2t + 8(q >> 1) + e). B: (k 2t + 8(q & 1) + e, n g + 8(q >> 1)).
        const unsigned int i = B ? 2u * t + 8u * (q & 1u) : g + 8u * (q & 1u);
        const unsigned int j = B ? g + 8u * (q >> 1) : 2u * t + 8u * (q >> 1);
        // The pair runs along k: A's columns, B's rows.
        const unsigned int di = B ? 1u : 0u, dj = B ? 0u : 1u;
        const unsigned int h0 = COL ? index + j * stride + i : index + i * stride + j;
        const unsigned int h1 = COL ? index + (j + dj) * stride + i + di : index + (i + di) * stride + j + dj;
        f[q] = ok_tile_half(arr, h0) | (ok_tile_half(arr, h1) << 16);
    }
}

template <bool COL>
static __device__ __forceinline__ void ok_tile_load_f32(float* c, const float* arr, unsigned int index, unsigned int stride, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, g = lane >> 2, t = lane & 3u;
#pragma unroll
    for (unsigned int e = 0; e < 8u; e++) {
        const unsigned int i = g + 8u * ((e >> 1) & 1u), j = 8u * (e >> 2) + 2u * t + (e & 1u);
        c[e] = arr[COL ? index + j * stride + i : index + i * stride + j];
    }
}

template <bool COL>
static __device__ __forceinline__ void ok_tile_store_f32(const float* c, float* arr, unsigned int index, unsigned int stride, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, g = lane >> 2, t = lane & 3u;
#pragma unroll
    for (unsigned int e = 0; e < 8u; e++) {
        const unsigned int i = g + 8u * ((e >> 1) & 1u), j = 8u * (e >> 2) + 2u * t + (e & 1u);
        arr[COL ? index + j * stride + i : index + i * stride + j] = c[e];
    }
}

// Element access (docs/DSL.md, "Element access"): slot e of an accumulator is its
// register e, at (row g + 8·(e / 2 mod 2), column 8·(e / 4) + 2t + e mod 2); an A tile's
// f16 value e sits at the same coordinates (register e / 2, half e mod 2), so the
// accumulators of S = Q·Kᵀ become the A operand of P·V without leaving registers.
static __device__ __forceinline__ void ok_tile_get(float* v, const float* c) {
#pragma unroll
    for (int e = 0; e < 8; e++) { v[e] = c[e]; }
}

static __device__ __forceinline__ void ok_tile_set_acc(float* c, const float* v) {
#pragma unroll
    for (int e = 0; e < 8; e++) { c[e] = v[e]; }
}

// Each pair rounded to f16, to nearest even (the low half the even slot).
static __device__ __forceinline__ void ok_tile_set_a(unsigned int* a, const float* v) {
#pragma unroll
    for (int q = 0; q < 4; q++) {
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(a[q]) : "f"(v[2 * q + 1]), "f"(v[2 * q]));
    }
}

static __device__ __forceinline__ void ok_tile_coords(unsigned int* rows, unsigned int* cols, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, g = lane >> 2, t = lane & 3u;
#pragma unroll
    for (unsigned int e = 0; e < 8u; e++) {
        rows[e] = g + 8u * ((e >> 1) & 1u);
        cols[e] = 8u * (e >> 2) + 2u * t + (e & 1u);
    }
}

// A row's 16 values are slots {0, 1, 4, 5} (row g) or {2, 3, 6, 7} (row g + 8) of the
// four lanes 4g … 4g + 3.
template <bool SUM>
static __device__ __forceinline__ void ok_tile_rows(float* v) {
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int e0 = 2 * h;
        float r = SUM ? (v[e0] + v[e0 + 1]) + (v[e0 + 4] + v[e0 + 5]) : fmaxf(fmaxf(v[e0], v[e0 + 1]), fmaxf(v[e0 + 4], v[e0 + 5]));
#pragma unroll
        for (int m = 1; m <= 2; m <<= 1) {
            const float o = __shfl_xor_sync(0xffffffffu, r, m);
            r = SUM ? r + o : fmaxf(r, o);
        }
        v[e0] = r;
        v[e0 + 1] = r;
        v[e0 + 4] = r;
        v[e0 + 5] = r;
    }
}

static __device__ __forceinline__ void ok_tile_row_max(float* v) { ok_tile_rows<false>(v); }
static __device__ __forceinline__ void ok_tile_row_sum(float* v) { ok_tile_rows<true>(v); }

// The warp's maximum in one redux.sync over the values' bits mapped to integers in the
// floats' order (negative values with their magnitude bits flipped).
static __device__ __forceinline__ void ok_tile_all_max(float* v) {
    float r = v[0];
#pragma unroll
    for (int e = 1; e < 8; e++) { r = fmaxf(r, v[e]); }
    int i = __float_as_int(r);
    i = __reduce_max_sync(0xffffffffu, i < 0 ? i ^ 0x7fffffff : i);
    r = __int_as_float(i < 0 ? i ^ 0x7fffffff : i);
#pragma unroll
    for (int e = 0; e < 8; e++) { v[e] = r; }
}

// `panel_word` (docs/DSL.md, "Panels"): each row's sixteen 16-byte chunks in two
// 64-value halves, half h of every row after half h − 1 of all rows, each row's half 128
// bytes with chunk c at c XOR (row mod 8): the 128-byte swizzle of wgmma (PTX ISA,
// "Shared Memory Matrix Layout"), whose 8 × 128-byte atoms need the panel's start
// 1024-byte aligned. ldmatrix reads the same layout without bank conflicts.
static __device__ __forceinline__ unsigned int ok_panel_word_u32(unsigned int row, unsigned int chunk, unsigned int rows) {
    return (chunk >> 3) * rows * 32u + row * 32u + (((chunk & 7u) ^ (row & 7u)) << 2);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// wgmma's shared-memory descriptor of the B a panel product reads. The start: row r0 of
// the half holding column col0, at column col0 mod 64 (K-major, within the 128-byte atom:
// the swizzle applies to the address bits, as wgmma reads them) or at the half's first
// column (by rows, col0 a multiple of 64). Eight rows of 128 bytes apart: 1024 (SBO, both
// majors); by rows, the next 64 columns a half apart (LBO, read with n = 128); the
// 128-byte swizzle.
static __device__ __forceinline__ unsigned long long ok_panel_desc(const unsigned int* arr, unsigned int base, unsigned int rows, unsigned int r0, unsigned int col0) {
    const unsigned int start = (unsigned int)__cvta_generic_to_shared(arr) + 4u * base + (col0 >> 6) * rows * 128u + r0 * 128u + 2u * (col0 & 63u);
    return (unsigned long long)((start & 0x3ffffu) >> 4) | ((unsigned long long)(((rows * 128u) >> 4) & 0x3fffu) << 16) | ((unsigned long long)(1024u >> 4) << 32) |
           (1ull << 62);
}
#endif

// acc[j] += a · B_j for j = 0 … 3 (16 × 16 each): B_j's (k, n) is the panel's value at
// (row r0 + 16j + n, column c0 + k) for a K-major panel (TRANS false: the rows are B's
// columns, as K's rows for Q · Kᵀ), or at (row r0 + k, column c0 + 16j + n) when TRANS
// (the rows are B's rows, as V's for P · V). `base` is the panel's first word. On sm_90a
// one wgmma m64n64k16 of the warpgroup (all four warps, each its own 16 rows of A and
// of the accumulators, which are wgmma's fragments); `ok_tile_mma_wait` completes it.
// Elsewhere four ldmatrix + mma.sync pairs, complete on return.
template <bool TRANS>
static __device__ __forceinline__ void ok_tile_mma_panel(float* c0, float* c1, float* c2, float* c3, const unsigned int* a, const unsigned int* arr,
                                                         unsigned int base, unsigned int rows, unsigned int r0, unsigned int col0, unsigned int lindex) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const unsigned long long desc = ok_panel_desc(arr, base, rows, r0, col0);
    // The fence in the product's own statement: as a statement of its own, the compiler
    // could place the accumulators' writes (their zeros, say) between it and the product,
    // and ptxas then serializes every wgmma of the kernel (warning C7515).
    asm volatile(
        "wgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{ %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
        "{ %32, %33, %34, %35}, %36, 1, 1, 1, %37;\n"
        "wgmma.commit_group.sync.aligned;"
        : "+f"(c0[0]), "+f"(c0[1]), "+f"(c0[2]), "+f"(c0[3]), "+f"(c0[4]), "+f"(c0[5]), "+f"(c0[6]), "+f"(c0[7]),
          "+f"(c1[0]), "+f"(c1[1]), "+f"(c1[2]), "+f"(c1[3]), "+f"(c1[4]), "+f"(c1[5]), "+f"(c1[6]), "+f"(c1[7]),
          "+f"(c2[0]), "+f"(c2[1]), "+f"(c2[2]), "+f"(c2[3]), "+f"(c2[4]), "+f"(c2[5]), "+f"(c2[6]), "+f"(c2[7]),
          "+f"(c3[0]), "+f"(c3[1]), "+f"(c3[2]), "+f"(c3[3]), "+f"(c3[4]), "+f"(c3[5]), "+f"(c3[6]), "+f"(c3[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(TRANS ? 1 : 0)
        : "memory");
#else
    // ldmatrix.x4 with each lane's row address in the panel's layout (see
    // ok_tile_ldmatrix for the four 8 × 8 matrices and which lanes name them).
    const unsigned int lane = lindex & 31u, m = lane >> 3, r = lane & 7u;
    float* cs[4] = {c0, c1, c2, c3};
#pragma unroll
    for (unsigned int j = 0; j < 4u; j++) {
        unsigned int b[4];
        // B's matrices: (k 0–7, n 0–7), (k 8–15, n 0–7), (k 0–7, n 8–15), (k 8–15, n 8–15).
        const unsigned int bk = 8u * (m & 1u), bn = 8u * (m >> 1);
        unsigned int row, col;
        if (TRANS) {
            row = r0 + bk + r;
            col = col0 + 16u * j + bn;
        } else {
            row = r0 + 16u * j + bn + r;
            col = col0 + bk;
        }
        ok_ldmatrix_x4<TRANS>(b, (unsigned int)__cvta_generic_to_shared(arr) + 4u * (base + ok_panel_word_u32(row, col >> 3, rows)));
        ok_tile_mma(cs[j], a, b);
    }
#endif
}

// The same over 128 columns: acc[j] += a · B_j for j = 0 … 7 (B_j at rows r0 + 16j + n
// of a K-major panel, or at columns 16j + n of a panel by rows, col0 then 0). On sm_90a
// one wgmma m64n128k16 of the warpgroup: its 64 accumulators per invocation are the
// eight tiles' slots in order, and a panel by rows reaches its second 64 columns through
// the descriptor's leading offset (a half apart). Elsewhere two 64-column halves.
template <bool TRANS>
static __device__ __forceinline__ void ok_tile_mma_panel8(float* c0, float* c1, float* c2, float* c3, float* c4, float* c5, float* c6, float* c7,
                                                          const unsigned int* a, const unsigned int* arr, unsigned int base, unsigned int rows,
                                                          unsigned int r0, unsigned int col0, unsigned int lindex) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    const unsigned long long desc = ok_panel_desc(arr, base, rows, r0, col0);
    asm volatile(
        "wgmma.fence.sync.aligned;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 "
        "{ %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "
        "{ %64, %65, %66, %67}, %68, 1, 1, 1, %69;\n"
        "wgmma.commit_group.sync.aligned;"
        : "+f"(c0[0]), "+f"(c0[1]), "+f"(c0[2]), "+f"(c0[3]), "+f"(c0[4]), "+f"(c0[5]), "+f"(c0[6]), "+f"(c0[7]),
          "+f"(c1[0]), "+f"(c1[1]), "+f"(c1[2]), "+f"(c1[3]), "+f"(c1[4]), "+f"(c1[5]), "+f"(c1[6]), "+f"(c1[7]),
          "+f"(c2[0]), "+f"(c2[1]), "+f"(c2[2]), "+f"(c2[3]), "+f"(c2[4]), "+f"(c2[5]), "+f"(c2[6]), "+f"(c2[7]),
          "+f"(c3[0]), "+f"(c3[1]), "+f"(c3[2]), "+f"(c3[3]), "+f"(c3[4]), "+f"(c3[5]), "+f"(c3[6]), "+f"(c3[7]),
          "+f"(c4[0]), "+f"(c4[1]), "+f"(c4[2]), "+f"(c4[3]), "+f"(c4[4]), "+f"(c4[5]), "+f"(c4[6]), "+f"(c4[7]),
          "+f"(c5[0]), "+f"(c5[1]), "+f"(c5[2]), "+f"(c5[3]), "+f"(c5[4]), "+f"(c5[5]), "+f"(c5[6]), "+f"(c5[7]),
          "+f"(c6[0]), "+f"(c6[1]), "+f"(c6[2]), "+f"(c6[3]), "+f"(c6[4]), "+f"(c6[5]), "+f"(c6[6]), "+f"(c6[7]),
          "+f"(c7[0]), "+f"(c7[1]), "+f"(c7[2]), "+f"(c7[3]), "+f"(c7[4]), "+f"(c7[5]), "+f"(c7[6]), "+f"(c7[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "n"(TRANS ? 1 : 0)
        : "memory");
#else
    ok_tile_mma_panel<TRANS>(c0, c1, c2, c3, a, arr, base, rows, r0, col0, lindex);
    ok_tile_mma_panel<TRANS>(c4, c5, c6, c7, a, arr, base, rows, TRANS ? r0 : r0 + 64u, TRANS ? col0 + 64u : col0, lindex);
#endif
}

// `barrier()` in a kernel that reads panels: on sm_90a wgmma reads them through the
// async proxy, so each invocation's shared-memory writes (stores, completed cp.async)
// are first ordered before the async proxy's reads (PTX ISA, "Proxies").
static __device__ __forceinline__ void ok_panel_barrier() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    __syncthreads();
}

// Completes every `ok_tile_mma_panel` of this warpgroup (on sm_90a: waits for its
// wgmma groups). The printer follows it with `ok_tile_fence_acc` / `ok_tile_fence_a` on
// every tile, so that no access to one moves above the wait.
static __device__ __forceinline__ void ok_tile_mma_wait() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
}
static __device__ __forceinline__ void ok_tile_fence_acc(float* c) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#pragma unroll
    for (int i = 0; i < 8; i++) { asm volatile("" : "+f"(c[i])::"memory"); }
#endif
}
static __device__ __forceinline__ void ok_tile_fence_a(unsigned int* a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#pragma unroll
    for (int i = 0; i < 4; i++) { asm volatile("" : "+r"(a[i])::"memory"); }
#endif
}
