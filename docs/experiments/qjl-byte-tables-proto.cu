// Experiment, not part of the toolchain: QJL scores by byte-position tables, timed beside
// the generated `qjl_score` (one table, no GQA) and a read of the same bytes, with the
// benchmark's rules (128 MiB read flush before each timed unit, CUDA events, median of
// 50 after 10 warm-ups; one dispatch, and 32 layers back to back over 32 caches).
//
// Byte tables: per query head T[b][p] = N[2p][b & 15] + N[2p + 1][b >> 4] for each of the
// 32 sign bytes p of a key and each byte value b, N the nibble tables of `qjl_score`
// (32 KiB). A key costs 32 lookups instead of 64. Entry (b, p) lies in bank p, and lane
// l visits byte p = s ^ l at step s, so a warp's 32 lookups fall in 32 banks whatever the
// bytes; a balanced tree over the steps equals the one over positions (XOR maps it onto
// itself), so every lane computes the same sum order.
//
// Build on the GPU machine from the repository root:
//   nvcc -O3 -arch=sm_90 --fmad=false -ftz=false -o /tmp/proto docs/experiments/qjl-byte-tables-proto.cu
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "../../generated/cuda/qjl_score.cu"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

template <int NT, int MINB, bool PRESHIFT>
__global__ void __launch_bounds__(NT, MINB) qjl_bytes(const float* __restrict__ q, const unsigned* __restrict__ k, float* __restrict__ scores, unsigned n_tokens, unsigned tiles_per_group) {
    constexpr unsigned TW = NT * 34 / 4 + 2;
    constexpr unsigned NL = (TW + NT - 1) / NT;
    __shared__ float T[8192];
    __shared__ unsigned tile[TW > 1088 ? TW : 1088];
    const unsigned lid = threadIdx.x, kvh = blockIdx.y, h = kvh;
    const unsigned ntiles = (n_tokens + NT - 1) / NT;
    const unsigned t0 = blockIdx.x * tiles_per_group, te = min(t0 + tiles_per_group, ntiles);
    if (t0 >= te) return;
    unsigned staged[NL];
    auto load = [&](unsigned tb) {
        unsigned tn = min((unsigned)NT, n_tokens - tb);
        unsigned first = (kvh * n_tokens + tb) * 34;
        unsigned nw = (first + tn * 34 + 3) / 4 - first / 4;
#pragma unroll
        for (unsigned u = 0; u < NL; u++) {
            unsigned w = u * NT + lid;
            staged[u] = w < nw ? k[first / 4 + w] : 0u;
        }
    };
    load(t0 * NT);
    for (unsigned i = lid; i < 1024; i += NT) {
        unsigned n = i >> 4, v = i & 15;
        float acc = 0.f;
#pragma unroll
        for (unsigned b = 0; b < 4; b++) {
            float x = q[h * 256 + 4 * n + b];
            acc = ((v >> b) & 1) ? acc + x : acc - x;
        }
        tile[n * 17 + v] = __float_as_uint(acc);
    }
    __syncthreads();
    for (unsigned i = lid; i < 8192; i += NT) {
        unsigned b = i >> 5, p = i & 31;
        T[i] = __uint_as_float(tile[(2 * p) * 17 + (b & 15)]) + __uint_as_float(tile[(2 * p + 1) * 17 + (b >> 4)]);
    }
    const unsigned l = lid & 31, x = l >> 2, y = l & 3;
    unsigned sh[4];
#pragma unroll
    for (unsigned j = 0; j < 4; j++) sh[j] = 8 * (j ^ y);
    for (unsigned ti = t0; ti < te; ti++) {
        unsigned tb = ti * NT, tn = min((unsigned)NT, n_tokens - tb);
        unsigned off = ((kvh * n_tokens + tb) * 34) % 4;
        __syncthreads();
#pragma unroll
        for (unsigned u = 0; u < NL; u++) {
            unsigned w = u * NT + lid;
            if (w < TW) tile[w] = staged[u];
        }
        __syncthreads();
        if (ti + 1 < te) load(tb + NT);
        if (lid < tn) {
            unsigned ro = off + lid * 34, a = ro >> 2, s = (ro & 3) * 8;
            float S[8];
#pragma unroll
            for (unsigned g = 0; g < 8; g++) {
                unsigned gi = g ^ x;
                unsigned wv = __funnelshift_r(tile[a + gi], tile[a + gi + 1], s);
                float v[4];
#pragma unroll
                if (PRESHIFT) {
                    // The word times 2^7 as a 64-bit pair: one funnel shift puts byte
                    // j ^ y at bits 7-14, the table's byte offset of its row.
                    unsigned lo = wv << 7, hi = wv >> 25;
#pragma unroll
                    for (unsigned j = 0; j < 4; j++) {
                        unsigned r = __funnelshift_r(lo, hi, sh[j]);
                        unsigned at = (r & 0x7f80u) | ((((4 * g + j) ^ l)) << 2);
                        v[j] = *(const float*)((const char*)T + at);
                    }
                } else {
#pragma unroll
                    for (unsigned j = 0; j < 4; j++) {
                        unsigned byte = (wv >> sh[j]) & 255u;
                        v[j] = T[(byte << 5) | ((4 * g + j) ^ l)];
                    }
                }
                S[g] = (v[0] + v[1]) + (v[2] + v[3]);
            }
            float acc = ((S[0] + S[1]) + (S[2] + S[3])) + ((S[4] + S[5]) + (S[6] + S[7]));
            unsigned nb = ro + 32;
            float norm = __uint_as_float(((tile[nb >> 2] >> ((nb & 3) * 8)) & 0xffffu) << 16);
            scores[h * n_tokens + tb + lid] = (0.0048957583f * norm) * acc;
        }
    }
}

// Reads n words (16 bytes at a time) and writes one word per block so nothing is elided.
__global__ void read_all(const uint4* __restrict__ p, size_t n4, unsigned* out) {
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

static unsigned long long rng = 0x9E3779B97F4A7C15ull;
static unsigned rnd() { rng = rng * 6364136223846793005ull + 1442695040888963407ull; return (unsigned)(rng >> 32); }

struct Timer {
    cudaEvent_t a, b;
    Timer() { cudaEventCreate(&a); cudaEventCreate(&b); }
};

int main(int argc, char** argv) {
    const unsigned H = 8, LAYERS = 32;
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    printf("device %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    const int sms = prop.multiProcessorCount;
    size_t flush_bytes = 128ull << 20;
    uint4* flush; CK(cudaMalloc(&flush, flush_bytes));
    CK(cudaMemset(flush, 1, flush_bytes));
    unsigned* sink; CK(cudaMalloc(&sink, 1 << 20));
    Timer tm;
    auto do_flush = [&]() { read_all<<<sms * 4, 512>>>(flush, flush_bytes / 16, sink); };
    // Driver copy of 1 GiB.
    {
        size_t nb = 1ull << 30; void *s, *d; CK(cudaMalloc(&s, nb)); CK(cudaMalloc(&d, nb));
        std::vector<float> t;
        for (int r = 0; r < 20; r++) {
            cudaEventRecord(tm.a); cudaMemcpyAsync(d, s, nb, cudaMemcpyDeviceToDevice); cudaEventRecord(tm.b);
            cudaEventSynchronize(tm.b); float ms; cudaEventElapsedTime(&ms, tm.a, tm.b); if (r >= 5) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        printf("driver copy 1 GiB: %.3f ms, %.0f GB/s (read + written)\n", t[t.size() / 2], 2.0 * nb / (t[t.size() / 2] * 1e6));
        cudaFree(s); cudaFree(d);
    }
    for (unsigned L : {65536u, 16384u}) {
        size_t words = ((size_t)H * L * 34 + 3) / 4 + 4;
        size_t kbytes = (size_t)H * L * 34;
        std::vector<unsigned> hk(words);
        std::vector<float> hq(H * 256);
        for (auto& w : hk) w = rnd();
        // norms: bf16 of positive values near 1..10
        for (size_t t = 0; t < (size_t)H * L; t++) {
            size_t nb = t * 34 + 32;
            unsigned bf = 0x3f80u + (rnd() & 0x1ff);
            unsigned& w = hk[nb / 4];
            unsigned sft = (nb % 4) * 8;
            w = (w & ~(0xffffu << sft)) | (bf << sft);
        }
        for (auto& v : hq) v = ((rnd() >> 8) / 16777216.0f) * 2.f - 1.f;
        std::vector<unsigned*> dk(LAYERS); std::vector<float*> dq(LAYERS), ds(LAYERS);
        for (unsigned l = 0; l < LAYERS; l++) {
            CK(cudaMalloc(&dk[l], words * 4)); CK(cudaMemcpy(dk[l], hk.data(), words * 4, cudaMemcpyHostToDevice));
            CK(cudaMalloc(&dq[l], hq.size() * 4)); CK(cudaMemcpy(dq[l], hq.data(), hq.size() * 4, cudaMemcpyHostToDevice));
            CK(cudaMalloc(&ds[l], (size_t)H * L * 4));
        }
        float* dprj; CK(cudaMalloc(&dprj, 16));
        // Reference in double for a sample of keys.
        auto ref = [&](unsigned h, unsigned t) {
            const unsigned char* b = (const unsigned char*)hk.data() + ((size_t)h * L + t) * 34;
            double acc = 0;
            for (int j = 0; j < 256; j++) acc += ((b[j / 8] >> (j % 8)) & 1 ? 1.0 : -1.0) * hq[h * 256 + j];
            unsigned bf = b[32] | (b[33] << 8); unsigned u = bf << 16; float nrm; memcpy(&nrm, &u, 4);
            return 0.0048957583 * nrm * acc;
        };
        auto check = [&](const char* name) {
            std::vector<float> out((size_t)H * L);
            CK(cudaMemcpy(out.data(), ds[0], out.size() * 4, cudaMemcpyDeviceToHost));
            double worst = 0;
            for (unsigned i = 0; i < 4096; i++) {
                unsigned h = rnd() % H, t = (i < 64) ? (L - 1 - i) : rnd() % L;
                double r = ref(h, t), g = out[(size_t)h * L + t];
                worst = std::max(worst, fabs(r - g) / std::max(1e-3, fabs(r)));
            }
            printf("  %-28s max rel err vs double %.2e\n", name, worst);
        };
        auto timeit = [&](const char* name, auto launch) {
            std::vector<float> one, lay;
            for (int r = 0; r < 60; r++) {
                do_flush();
                cudaEventRecord(tm.a); launch(0); cudaEventRecord(tm.b);
                cudaEventSynchronize(tm.b); float ms; cudaEventElapsedTime(&ms, tm.a, tm.b); if (r >= 10) one.push_back(ms * 1000);
            }
            for (int r = 0; r < 30; r++) {
                do_flush();
                cudaEventRecord(tm.a); for (unsigned l = 0; l < LAYERS; l++) launch(l); cudaEventRecord(tm.b);
                cudaEventSynchronize(tm.b); float ms; cudaEventElapsedTime(&ms, tm.a, tm.b); if (r >= 5) lay.push_back(ms * 1000 / LAYERS);
            }
            CK(cudaGetLastError());
            std::sort(one.begin(), one.end()); std::sort(lay.begin(), lay.end());
            float a = one[one.size() / 2], b = lay[lay.size() / 2];
            printf("  %-28s one %7.2f us %6.0f GB/s | per layer %7.2f us %6.0f GB/s\n", name, a, kbytes / (a * 1e3), b, kbytes / (b * 1e3));
        };
        printf("L = %u, %u / %u heads, %zu bytes\n", L, H, H, kbytes);
        {
            unsigned tiles = (L + 127) / 128, per = std::max(1u, (tiles * H + 511) / 512), groups = (tiles + per - 1) / per;
            ok_push_qjl_score pc{H, H, L, 0, per};
            auto go = [&](unsigned l) { qjl_score__four_heads_false<<<dim3(groups, H), 128>>>(dq[l], dk[l], dprj, ds[l], pc); };
            go(0); CK(cudaDeviceSynchronize()); check("generated qjl_score");
            timeit("generated qjl_score", go);
        }
        auto bytes_variant = [&](const char* name, auto kern, unsigned nt, unsigned per_sm) {
            unsigned tiles = (L + nt - 1) / nt;
            unsigned target = sms * per_sm;
            unsigned per = std::max(1u, (tiles * H + target - 1) / target), groups = (tiles + per - 1) / per;
            auto go = [&](unsigned l) { kern<<<dim3(groups, H), nt>>>(dq[l], dk[l], ds[l], L, per); };
            CK(cudaMemset(ds[0], 0, (size_t)H * L * 4));
            go(0); CK(cudaDeviceSynchronize()); check(name);
            timeit(name, go);
        };
        bytes_variant("bytes 256x2", qjl_bytes<256, 2, false>, 256, 2);
        bytes_variant("bytes 256x3", qjl_bytes<256, 3, false>, 256, 3);
        bytes_variant("bytes 256x4", qjl_bytes<256, 4, false>, 256, 4);
        bytes_variant("bytes 128x4", qjl_bytes<128, 4, false>, 128, 4);
        bytes_variant("bytes 128x8", qjl_bytes<128, 8, false>, 128, 8);
        bytes_variant("bytes preshift 256x2", qjl_bytes<256, 2, true>, 256, 2);
        bytes_variant("bytes preshift 256x3", qjl_bytes<256, 3, true>, 256, 3);
        bytes_variant("bytes preshift 256x4", qjl_bytes<256, 4, true>, 256, 4);
        bytes_variant("bytes preshift 128x4", qjl_bytes<128, 4, true>, 128, 4);
        {
            auto go = [&](unsigned l) { read_all<<<sms * 4, 512>>>((const uint4*)dk[l], kbytes / 16, sink); };
            timeit("read of the same bytes", go);
        }
        for (unsigned l = 0; l < LAYERS; l++) { cudaFree(dk[l]); cudaFree(dq[l]); cudaFree(ds[l]); }
        cudaFree(dprj);
        // The read ceiling of TBQ4's (72 B) and Polar's (82 B) caches of this length.
        for (unsigned bpr : {72u, 82u}) {
            size_t nb = (size_t)H * L * bpr;
            std::vector<void*> bufs(LAYERS);
            for (auto& b : bufs) { CK(cudaMalloc(&b, nb)); CK(cudaMemset(b, 1, nb)); }
            char name[64]; snprintf(name, sizeof name, "read of %u-byte rows", bpr);
            kbytes = nb;
            auto go = [&](unsigned l) { read_all<<<sms * 4, 512>>>((const uint4*)bufs[l], nb / 16, sink); };
            timeit(name, go);
            for (auto& b : bufs) cudaFree(b);
        }
    }
    return 0;
}
