// mma_f16 (docs/DSL.md, "Matrix multiply-accumulate"): a warp adds the product of a
// 16 × K and a K × 8 f16 matrix, both in shared memory, to 16 × cols f32 accumulators
// in shared memory. The DSL's group of 32 consecutive local linear indices is a warp
// (CUDA forms warps that way). From sm_80: ldmatrix (A row- or column-major, B column by
// column) and mma.sync m16n8k16, f32 accumulation; the fragments follow the PTX ISA's
// layouts (lane = 4·g + t holds rows g and g + 8, columns 2t and 2t + 1 of C). Before
// sm_80 the interpreter's loop: one fma per product in inner-index order.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
template <unsigned int K, bool A_COL>
static __device__ __forceinline__ void ok_mma_f16(float* acc, unsigned int c0, unsigned int crs, unsigned int ccs, unsigned int cols,
                                                  const unsigned int* a, unsigned int a0, unsigned int as, const unsigned int* b,
                                                  unsigned int b0, unsigned int bs, unsigned int lindex) {
    const unsigned int lane = lindex & 31u, g = lane >> 2, t = lane & 3u;
    __syncwarp();
    float c[4];
#pragma unroll
    for (unsigned int r = 0; r < 4u; r++) {
        const unsigned int i = g + 8u * (r >> 1), j = 2u * t + (r & 1u);
        c[r] = j < cols ? acc[c0 + i * crs + j * ccs] : 0.0f;
    }
    // ldmatrix: lane 8m + rr gives the address of row rr of 8 × 8 matrix m. A's matrices
    // are (rows 0–7, k 0–7), (rows 8–15, k 0–7), (rows 0–7, k 8–15), (rows 8–15, k 8–15);
    // stored column by column, a stored row is one k, read transposed. B's are k 0–7 and
    // k 8–15 of its eight columns (lanes 16–31 repeat valid addresses).
    const unsigned int m = lane >> 3, rr = lane & 7u;
    unsigned int a_h = A_COL ? a0 + (8u * (m >> 1) + rr) * as + 8u * (m & 1u) : a0 + (8u * (m & 1u) + rr) * as + 8u * (m >> 1);
    // Columns past `cols` need not lie in the array: their lanes read column 0 instead.
    unsigned int b_h = b0 + (rr < cols ? rr : 0u) * bs + 8u * (m & 1u);
    const unsigned int a_step = A_COL ? 16u * as : 16u;
    const unsigned int a_base = (unsigned int)__cvta_generic_to_shared(a), b_base = (unsigned int)__cvta_generic_to_shared(b);
#pragma unroll
    for (unsigned int kk = 0; kk < K; kk += 16u) {
        unsigned int fa0, fa1, fa2, fa3, fb0, fb1;
        if (A_COL) {
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 { %0, %1, %2, %3}, [%4];"
                         : "=r"(fa0), "=r"(fa1), "=r"(fa2), "=r"(fa3) : "r"(a_base + 2u * a_h) : "memory");
        } else {
            asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 { %0, %1, %2, %3}, [%4];"
                         : "=r"(fa0), "=r"(fa1), "=r"(fa2), "=r"(fa3) : "r"(a_base + 2u * a_h) : "memory");
        }
        asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 { %0, %1}, [%2];" : "=r"(fb0), "=r"(fb1) : "r"(b_base + 2u * b_h) : "memory");
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 { %0, %1, %2, %3}, { %4, %5, %6, %7}, { %8, %9}, { %0, %1, %2, %3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(fa0), "r"(fa1), "r"(fa2), "r"(fa3), "r"(fb0), "r"(fb1));
        a_h += a_step;
        b_h += 16u;
    }
#pragma unroll
    for (unsigned int r = 0; r < 4u; r++) {
        const unsigned int i = g + 8u * (r >> 1), j = 2u * t + (r & 1u);
        if (j < cols) { acc[c0 + i * crs + j * ccs] = c[r]; }
    }
    __syncwarp();
}
#else
template <unsigned int K, bool A_COL>
static __device__ __forceinline__ void ok_mma_f16(float* acc, unsigned int c0, unsigned int crs, unsigned int ccs, unsigned int cols,
                                                  const unsigned int* a, unsigned int a0, unsigned int as, const unsigned int* b,
                                                  unsigned int b0, unsigned int bs, unsigned int lindex) {
    __syncwarp();
    for (unsigned int e = lindex & 31u; e < 128u; e += 32u) {
        const unsigned int i = e / 8u, j = e % 8u;
        if (j < cols) {
            float s = acc[c0 + i * crs + j * ccs];
            for (unsigned int kk = 0; kk < K; kk++) {
                const unsigned int ha = A_COL ? a0 + kk * as + i : a0 + i * as + kk, hb = b0 + j * bs + kk;
                s = fmaf(ok_f16_to_f32(a[ha / 2u] >> (16u * (ha % 2u))), ok_f16_to_f32(b[hb / 2u] >> (16u * (hb % 2u))), s);
            }
            acc[c0 + i * crs + j * ccs] = s;
        }
    }
    __syncwarp();
}
#endif
