// Experiment: how fast can any kernel read the bytes of a quantized KV cache under
// bench-kvquant's rules (128 MiB read flush before each timed unit, CUDA events, median
// of 50; one dispatch, and 32 layers back to back over 32 caches, plain and as dependent
// launches)? A score kernel must read every byte, so this bounds its bandwidth figure.
// Several read kernels are timed; the best is the ceiling.
//
//   nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/ceiling docs/experiments/read-ceiling.cu && /tmp/ceiling
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); exit(1); } } while (0)

__device__ __forceinline__ void dep_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// Grid-stride, one 16-byte load per iteration.
__global__ void read_stride(const uint4* __restrict__ p, size_t n4, unsigned* out) {
    dep_wait();
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// Each block reads U·blockDim consecutive 16-byte words, all U loads issued before use.
template <int U, bool STREAM>
__global__ void read_chunk(const uint4* __restrict__ p, size_t n4, unsigned* out) {
    dep_wait();
    size_t base = (size_t)blockIdx.x * U * blockDim.x + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; u++) {
        size_t i = base + (size_t)u * blockDim.x;
        if (i < n4) v[u] = STREAM ? __ldcs(p + i) : __ldg(p + i); else v[u] = make_uint4(0, 0, 0, 0);
    }
    unsigned acc = 0;
#pragma unroll
    for (int u = 0; u < U; u++) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

struct Kern { const char* name; void (*f)(const uint4*, size_t, unsigned*); int threads; int per_block; int grid_fixed; };

int main() {
    cudaDeviceProp prop; CK(cudaGetDeviceProperties(&prop, 0));
    const int sms = prop.multiProcessorCount;
    printf("device %s, %d SMs\n", prop.name, sms);
    const unsigned LAYERS = 32;
    size_t flush_bytes = 128ull << 20;
    uint4* flush; CK(cudaMalloc(&flush, flush_bytes)); CK(cudaMemset(flush, 1, flush_bytes));
    unsigned* sink; CK(cudaMalloc(&sink, 1 << 22));
    cudaEvent_t ea, eb; cudaEventCreate(&ea); cudaEventCreate(&eb);
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    auto do_flush = [&]() { read_stride<<<sms * 4, 512, 0, st>>>(flush, flush_bytes / 16, sink); };
    double copy_gbs;
    {
        size_t nb = 1ull << 30; void *s, *d; CK(cudaMalloc(&s, nb)); CK(cudaMalloc(&d, nb));
        std::vector<float> t;
        for (int r = 0; r < 20; r++) {
            cudaEventRecord(ea, st); cudaMemcpyAsync(d, s, nb, cudaMemcpyDeviceToDevice, st); cudaEventRecord(eb, st);
            cudaEventSynchronize(eb); float ms; cudaEventElapsedTime(&ms, ea, eb); if (r >= 5) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        copy_gbs = 2.0 * nb / (t[t.size() / 2] * 1e6);
        printf("driver copy 1 GiB: %.0f GB/s (read + written); 70 %% of it: %.0f GB/s\n", copy_gbs, 0.7 * copy_gbs);
        // A read of 1 GiB by the best kernel below, for scale.
        cudaFree(d);
        std::vector<float> t2;
        for (int r = 0; r < 20; r++) {
            cudaEventRecord(ea, st); read_chunk<8, false><<<(nb / 16 + 8 * 512 - 1) / (8 * 512), 512, 0, st>>>((const uint4*)s, nb / 16, sink); cudaEventRecord(eb, st);
            cudaEventSynchronize(eb); float ms; cudaEventElapsedTime(&ms, ea, eb); if (r >= 5) t2.push_back(ms);
        }
        std::sort(t2.begin(), t2.end());
        printf("read of 1 GiB (chunk8x512): %.0f GB/s\n", nb / (t2[t2.size() / 2] * 1e6));
        cudaFree(s);
    }
    Kern kerns[] = {
        {"stride 4x512/SM", read_stride, 512, 0, sms * 4},
        {"stride 8x256/SM", read_stride, 256, 0, sms * 8},
        {"chunk 4 x 256", read_chunk<4, false>, 256, 4, 0},
        {"chunk 8 x 256", read_chunk<8, false>, 256, 8, 0},
        {"chunk 8 x 512", read_chunk<8, false>, 512, 8, 0},
        {"chunk 16 x 256", read_chunk<16, false>, 256, 16, 0},
        {"chunk 2 x 512", read_chunk<2, false>, 512, 2, 0},
        {"chunk 8 x 256 stream", read_chunk<8, true>, 256, 8, 0},
    };
    struct Shape { const char* fmt; unsigned bpr; };
    for (unsigned L : {16384u, 65536u}) {
        for (Shape sh : {Shape{"QJL", 34}, Shape{"TBQ4", 72}, Shape{"Polar", 82}}) {
            size_t nb = (size_t)8 * L * sh.bpr;
            size_t n4 = (nb + 15) / 16;
            std::vector<uint4*> bufs(LAYERS);
            for (auto& b : bufs) { CK(cudaMalloc(&b, n4 * 16)); CK(cudaMemset(b, 1, n4 * 16)); }
            printf("%s L = %u (8 KV heads, %zu bytes): 70 %% of the copy = %.2f us\n", sh.fmt, L, nb, nb / (0.7 * copy_gbs * 1e3));
            double best_one = 1e9, best_plain = 1e9, best_pdl = 1e9;
            for (const Kern& k : kerns) {
                int grid = k.grid_fixed ? k.grid_fixed : (int)((n4 + (size_t)k.per_block * k.threads - 1) / ((size_t)k.per_block * k.threads));
                auto launch = [&](unsigned l, bool pdl) {
                    cudaLaunchConfig_t cfg = {}; cfg.gridDim = grid; cfg.blockDim = k.threads; cfg.stream = st;
                    cudaLaunchAttribute at[1]; at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization; at[0].val.programmaticStreamSerializationAllowed = 1;
                    cfg.attrs = at; cfg.numAttrs = pdl ? 1 : 0;
                    CK(cudaLaunchKernelEx(&cfg, k.f, (const uint4*)bufs[l], n4, sink));
                };
                auto med = [](std::vector<float>& v) { std::sort(v.begin(), v.end()); return (double)v[v.size() / 2]; };
                std::vector<float> one, plain, pdl;
                for (int r = 0; r < 60; r++) {
                    do_flush(); cudaEventRecord(ea, st); launch(0, false); cudaEventRecord(eb, st);
                    cudaEventSynchronize(eb); float ms; cudaEventElapsedTime(&ms, ea, eb); if (r >= 10) one.push_back(ms * 1000);
                }
                for (int mode = 0; mode < 2; mode++) {
                    for (int r = 0; r < 30; r++) {
                        do_flush(); cudaEventRecord(ea, st);
                        for (unsigned l = 0; l < LAYERS; l++) launch(l, mode == 1);
                        cudaEventRecord(eb, st);
                        cudaEventSynchronize(eb); float ms; cudaEventElapsedTime(&ms, ea, eb); if (r >= 5) (mode ? pdl : plain).push_back(ms * 1000 / LAYERS);
                    }
                }
                CK(cudaGetLastError());
                double a = med(one), b = med(plain), c = med(pdl);
                best_one = std::min(best_one, a); best_plain = std::min(best_plain, b); best_pdl = std::min(best_pdl, c);
                printf("  %-22s grid %6d  one %6.2f us %5.1f %% | layers plain %6.2f us %5.1f %% | dependent %6.2f us %5.1f %%\n", k.name, grid,
                       a, 100.0 * nb / (a * 1e3) / copy_gbs, b, 100.0 * nb / (b * 1e3) / copy_gbs, c, 100.0 * nb / (c * 1e3) / copy_gbs);
            }
            printf("  BEST %s L=%u: one %.2f us (%.1f %% of copy), per layer %.2f us (%.1f %%)\n", sh.fmt, L, best_one, 100.0 * nb / (best_one * 1e3) / copy_gbs,
                   std::min(best_plain, best_pdl), 100.0 * nb / (std::min(best_plain, best_pdl) * 1e3) / copy_gbs);
            for (auto& b : bufs) cudaFree(b);
        }
    }
    return 0;
}
