// Register tiles (docs/DSL.md, "Register tiles"): a 16 × 16 tile is 2 × 2 blocks of the
// SIMD group's 8 × 8 matrices, block (bi, bj) at [2·bi + bj]; operands are half, the
// accumulators float. Element (i, j) of memory is at index + i·stride + j, or
// index + j·stride + i when the memory holds the tile column by column (loaded and
// stored transposed).
#ifndef OK_MSL_EMU
// Operand memory as half values: the u32 arrays of f16 pairs, in each address space
// (msl-emu, whose C++ has no address spaces, defines its own).
static inline threadgroup half* ok_tile_halves_tg(threadgroup uint* p) { return (threadgroup half*)p; }
static inline device const half* ok_tile_halves_ro(device const uint* p) { return (device const half*)p; }
static inline device half* ok_tile_halves_rw(device uint* p) { return (device half*)p; }
#endif

template <typename T, typename P>
static inline void ok_tile_load(thread simdgroup_matrix<T, 8, 8>* t, P p, uint index, uint stride, bool col) {
    for (uint bi = 0; bi < 2u; bi++) {
        for (uint bj = 0; bj < 2u; bj++) {
            const uint off = col ? index + 8u * bj * stride + 8u * bi : index + 8u * bi * stride + 8u * bj;
            simdgroup_load(t[2u * bi + bj], p + off, stride, ulong2(0, 0), col);
        }
    }
}

template <typename P>
static inline void ok_tile_store(thread simdgroup_float8x8* t, P p, uint index, uint stride, bool col) {
    for (uint bi = 0; bi < 2u; bi++) {
        for (uint bj = 0; bj < 2u; bj++) {
            const uint off = col ? index + 8u * bj * stride + 8u * bi : index + 8u * bi * stride + 8u * bj;
            simdgroup_store(t[2u * bi + bj], p + off, stride, ulong2(0, 0), col);
        }
    }
}

static inline void ok_tile_fill(thread simdgroup_float8x8* t, float v) {
    for (uint e = 0; e < 4u; e++) {
        t[e] = make_filled_simdgroup_matrix<float, 8, 8>(v);
    }
}

// Times the diagonal matrix v·I: each value's product, plus zeros.
static inline void ok_tile_scale(thread simdgroup_float8x8* t, float v) {
    const simdgroup_float8x8 d = simdgroup_float8x8(v);
    for (uint e = 0; e < 4u; e++) {
        simdgroup_multiply(t[e], t[e], d);
    }
}

static inline void ok_tile_mma(thread simdgroup_float8x8* c, thread simdgroup_half8x8* a, thread simdgroup_half8x8* b) {
    for (uint bi = 0; bi < 2u; bi++) {
        for (uint bj = 0; bj < 2u; bj++) {
            for (uint kk = 0; kk < 2u; kk++) {
                simdgroup_multiply_accumulate(c[2u * bi + bj], a[2u * bi + kk], b[2u * kk + bj], c[2u * bi + bj]);
            }
        }
    }
}

// `panel_word` (docs/DSL.md, "Panels"): rows of 68 words (128 f16 values and 8 of padding, so that
// the 16-byte rows of a tile load start 4 banks apart), chunk c at word 4c.
static inline uint ok_panel_word_u32(uint row, uint chunk, uint rows) { return row * 68u + chunk * 4u; }
