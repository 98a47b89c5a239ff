// The anchor of `onekernel bench-linear`: the gated delta net's decode step written the way
// ggml's CUDA backend writes it, in two forms, timed like the generated kernel in the same
// GPU session:
//
//   thread_per_column  one thread per state column j, the column's S rows in registers,
//                      the sums Σ_i S[i][j]·k[i] and Σ_i S[i][j]·q[i] each thread's own loop
//                      (the form the issue names as ggml's).
//   warp_per_column    one warp per column, each lane holding S/32 rows, the sums reduced with
//                      warp shuffles, four warps per block (ggml's current kernel).
//
// Both read each sequence's state from a slot of a state cache through a slot table and
// write the new state back into it (the same bytes as onekernel's fused kernel), with the
// scalar gate per head, T = 1, S = 128, H = 32 value heads over Hk q/k heads (value head h
// reads q/k head h % Hk). Timing: CUDA events around each launch, the L2 flushed before
// each timed launch by a kernel that reads 128 MiB of zeroed scratch, median of N after 3
// warm-ups; per layer: 16 launches back to back over 16 caches, flushed before the unit.
// The driver copy (cudaMemcpyAsync device to device, 1 GiB, median of 20) of the same
// process is the reference bandwidth. Each form is checked against a float64 host
// computation of the first sequence's first head before it is timed.
//
// Build and run: nvcc -O3 -arch=native -o gdn_ggml cli/anchors/gdn_ggml.cu && ./gdn_ggml [runs]
// Prints one JSON document.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (x);                                                                 \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            exit(2);                                                                          \
        }                                                                                     \
    } while (0)

constexpr int S = 128;
constexpr int H = 32;
constexpr int LAYERS = 16;
constexpr int SPARE_SLOTS = 8;

struct Step {
    const float *q, *k, *v, *g, *beta;
    const int *slots;
    float *cache, *out;
    int hk;
};

// One block per (head, sequence), one thread per column j.
__global__ void __launch_bounds__(S) thread_per_column(Step p) {
    const int h = blockIdx.x, b = blockIdx.y, j = threadIdx.x;
    const int hk = h % p.hk;
    __shared__ float qs[S], ks[S];
    qs[j] = p.q[(b * p.hk + hk) * S + j];
    ks[j] = p.k[(b * p.hk + hk) * S + j];
    __syncthreads();
    float* row = p.cache + ((size_t)p.slots[b] * H + h) * S * S + (size_t)j * S;
    float st[S];
#pragma unroll
    for (int i = 0; i < S; i++) st[i] = row[i];
    const float decay = expf(p.g[b * H + h]);
    const float beta = p.beta[b * H + h];
    float kv = 0.0f;
#pragma unroll
    for (int i = 0; i < S; i++) {
        st[i] *= decay;
        kv += st[i] * ks[i];
    }
    const float delta = (p.v[(b * H + h) * S + j] - kv) * beta;
    float o = 0.0f;
#pragma unroll
    for (int i = 0; i < S; i++) {
        st[i] += ks[i] * delta;
        o += st[i] * qs[i];
    }
    p.out[(b * H + h) * S + j] = o * rsqrtf((float)S);
#pragma unroll
    for (int i = 0; i < S; i++) row[i] = st[i];
}

// Blocks of 32 × 4: warp y of block z owns column 4z + y of one (head, sequence).
__global__ void __launch_bounds__(128) warp_per_column(Step p) {
    const int h = blockIdx.x, b = blockIdx.y, lane = threadIdx.x;
    const int j = blockIdx.z * 4 + threadIdx.y;
    const int hk = h % p.hk;
    constexpr int R = S / 32;
    float* row = p.cache + ((size_t)p.slots[b] * H + h) * S * S + (size_t)j * S;
    const float* q = p.q + (b * p.hk + hk) * S;
    const float* k = p.k + (b * p.hk + hk) * S;
    float st[R], kr[R], qr[R];
#pragma unroll
    for (int r = 0; r < R; r++) {
        st[r] = row[r * 32 + lane];
        kr[r] = k[r * 32 + lane];
        qr[r] = q[r * 32 + lane];
    }
    const float decay = expf(p.g[b * H + h]);
    const float beta = p.beta[b * H + h];
    float kv = 0.0f;
#pragma unroll
    for (int r = 0; r < R; r++) kv += st[r] * kr[r];
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) kv += __shfl_xor_sync(0xffffffffu, kv, m);
    const float delta = (p.v[(b * H + h) * S + j] - decay * kv) * beta;
    float o = 0.0f;
#pragma unroll
    for (int r = 0; r < R; r++) {
        st[r] = decay * st[r] + kr[r] * delta;
        o += st[r] * qr[r];
    }
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) o += __shfl_xor_sync(0xffffffffu, o, m);
    if (lane == 0) p.out[(b * H + h) * S + j] = o * rsqrtf((float)S);
#pragma unroll
    for (int r = 0; r < R; r++) row[r * 32 + lane] = st[r];
}

// Reads `n` words and writes only where they XOR to a tag no one meets: the L2 flush.
__global__ void flush_read(const unsigned* w, size_t n, unsigned* hit) {
    unsigned x = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) x ^= w[i];
    if (x == 0xffffffffu) *hit = x;
}

static unsigned rng_state = 12345;
static float uniform(float lo, float hi) {
    rng_state = rng_state * 1664525u + 1013904223u;
    return lo + (hi - lo) * ((rng_state >> 8) / 16777216.0f);
}

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

struct Buffers {
    std::vector<float*> caches;
    float *q, *k, *v, *g, *beta, *out;
    int* slots;
    std::vector<int> host_slots;
    std::vector<float> hq, hk, hv, hg, hbeta, hcache;
};

static float* upload(const std::vector<float>& h) {
    float* d;
    CHECK(cudaMalloc(&d, h.size() * sizeof(float)));
    CHECK(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
    return d;
}

static std::vector<float> vals(size_t n, float lo, float hi) {
    std::vector<float> v(n);
    for (auto& x : v) x = uniform(lo, hi);
    return v;
}

static void launch(int form, const Step& p, int b) {
    if (form == 0)
        thread_per_column<<<dim3(H, b), S>>>(p);
    else
        warp_per_column<<<dim3(H, b, S / 4), dim3(32, 4)>>>(p);
}

// Largest |out − reference| of sequence 0, head 0, from the host's copy of its state.
static double check(int form, Buffers& bf, int b, int hk) {
    Step p{bf.q, bf.k, bf.v, bf.g, bf.beta, bf.slots, bf.caches[0], bf.out, hk};
    std::vector<float> cache0 = bf.hcache;
    CHECK(cudaMemcpy(bf.caches[0], cache0.data(), cache0.size() * 4, cudaMemcpyHostToDevice));
    launch(form, p, b);
    CHECK(cudaDeviceSynchronize());
    std::vector<float> out(S);
    CHECK(cudaMemcpy(out.data(), bf.out, S * 4, cudaMemcpyDeviceToHost));
    const float* st = &cache0[(size_t)bf.host_slots[0] * H * S * S];
    double decay = std::exp((double)bf.hg[0]), beta = bf.hbeta[0], worst = 0.0;
    for (int j = 0; j < S; j++) {
        double kv = 0, o = 0;
        for (int i = 0; i < S; i++) kv += decay * st[j * S + i] * bf.hk[i];
        double delta = (bf.hv[j] - kv) * beta;
        for (int i = 0; i < S; i++) o += (decay * st[j * S + i] + bf.hk[i] * delta) * bf.hq[i];
        worst = std::max(worst, std::fabs(o / std::sqrt((double)S) - out[j]));
    }
    return worst;
}

int main(int argc, char** argv) {
    const int runs = argc > 1 ? atoi(argv[1]) : 50;
    const size_t flush_words = (128u << 20) / 4;
    unsigned *flush, *hit;
    CHECK(cudaMalloc(&flush, flush_words * 4));
    CHECK(cudaMemset(flush, 0, flush_words * 4));
    CHECK(cudaMalloc(&hit, 4));
    auto do_flush = [&] { flush_read<<<1024, 256>>>(flush, flush_words, hit); };
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    auto elapsed_ns = [&] {
        float ms;
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        return ms * 1e6f;
    };

    // The driver copy.
    const size_t copy_bytes = 1u << 30;
    void *ca, *cb;
    CHECK(cudaMalloc(&ca, copy_bytes));
    CHECK(cudaMalloc(&cb, copy_bytes));
    CHECK(cudaMemset(ca, 0, copy_bytes));
    std::vector<float> copy_ns;
    for (int i = 0; i < 23; i++) {
        do_flush();
        CHECK(cudaEventRecord(e0));
        CHECK(cudaMemcpyAsync(cb, ca, copy_bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(e1));
        float t = elapsed_ns();
        if (i >= 3) copy_ns.push_back(t);
    }
    CHECK(cudaFree(ca));
    CHECK(cudaFree(cb));
    const double copy_gbs = 2.0 * copy_bytes / median(copy_ns);
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("{\n  \"device\": \"%s\",\n  \"driver_copy\": {\"api\": \"cudaMemcpyAsync\", \"bytes\": %zu, \"gb_per_s\": %.1f},\n  \"runs\": %d, \"warmup\": 3, \"layers\": %d,\n  \"results\": [",
           prop.name, copy_bytes, copy_gbs, runs, LAYERS);

    bool first = true;
    for (int b : {1, 16, 64}) {
        for (int hk : {16, 32}) {
            const int slots = b + SPARE_SLOTS;
            Buffers bf;
            bf.hq = vals((size_t)b * hk * S, -0.1f, 0.1f);
            bf.hk = vals((size_t)b * hk * S, -0.1f, 0.1f);
            bf.hv = vals((size_t)b * H * S, -1.0f, 1.0f);
            bf.hg = vals((size_t)b * H, -0.1f, 0.0f);
            bf.hbeta = vals((size_t)b * H, 0.0f, 1.0f);
            bf.hcache = vals((size_t)slots * H * S * S, -0.5f, 0.5f);
            std::vector<int> pool(slots);
            for (int i = 0; i < slots; i++) pool[i] = i;
            for (int i = slots - 1; i > 0; i--) std::swap(pool[i], pool[(int)(uniform(0, 1) * (i + 1)) % (i + 1)]);
            bf.host_slots.assign(pool.begin(), pool.begin() + b);
            bf.q = upload(bf.hq);
            bf.k = upload(bf.hk);
            bf.v = upload(bf.hv);
            bf.g = upload(bf.hg);
            bf.beta = upload(bf.hbeta);
            bf.out = upload(std::vector<float>((size_t)b * H * S, 0.0f));
            CHECK(cudaMalloc(&bf.slots, b * 4));
            CHECK(cudaMemcpy(bf.slots, bf.host_slots.data(), b * 4, cudaMemcpyHostToDevice));
            for (int l = 0; l < LAYERS; l++) bf.caches.push_back(upload(bf.hcache));
            const double bytes = 4.0 * (2.0 * b * H * S * S + 2.0 * b * hk * S + 2.0 * b * H * S + 2.0 * b * H + b);
            for (int form = 0; form < 2; form++) {
                const double err = check(form, bf, b, hk);
                std::vector<float> one, unit;
                for (int i = 0; i < runs + 3; i++) {
                    Step p{bf.q, bf.k, bf.v, bf.g, bf.beta, bf.slots, bf.caches[0], bf.out, hk};
                    do_flush();
                    CHECK(cudaEventRecord(e0));
                    launch(form, p, b);
                    CHECK(cudaEventRecord(e1));
                    float t = elapsed_ns();
                    if (i >= 3) one.push_back(t);
                }
                for (int i = 0; i < std::min(runs, 20) + 3; i++) {
                    do_flush();
                    CHECK(cudaEventRecord(e0));
                    for (int l = 0; l < LAYERS; l++) {
                        Step p{bf.q, bf.k, bf.v, bf.g, bf.beta, bf.slots, bf.caches[l], bf.out, hk};
                        launch(form, p, b);
                    }
                    CHECK(cudaEventRecord(e1));
                    float t = elapsed_ns();
                    if (i >= 3) unit.push_back(t / LAYERS);
                }
                CHECK(cudaGetLastError());
                const double t1 = median(one), tl = median(unit);
                printf("%s\n    {\"form\": \"%s\", \"n_seqs\": %d, \"n_heads\": %d, \"n_k_heads\": %d, \"head_size\": %d, \"bytes_moved\": %.0f, "
                       "\"max_abs_err_vs_f64\": %.3e, \"one_dispatch\": {\"median_ns\": %.0f, \"gb_per_s\": %.1f, \"fraction_of_driver_copy\": %.3f}, "
                       "\"per_layer\": {\"ns\": %.0f, \"gb_per_s\": %.1f, \"fraction_of_driver_copy\": %.3f}}",
                       first ? "" : ",", form == 0 ? "thread_per_column" : "warp_per_column", b, H, hk, S, bytes, err, t1, bytes / t1,
                       bytes / t1 / copy_gbs, tl, bytes / tl, bytes / tl / copy_gbs);
                first = false;
                fflush(stdout);
            }
            for (float* c : bf.caches) CHECK(cudaFree(c));
            for (void* d : {(void*)bf.q, (void*)bf.k, (void*)bf.v, (void*)bf.g, (void*)bf.beta, (void*)bf.out, (void*)bf.slots}) CHECK(cudaFree(d));
        }
    }
    printf("\n  ]\n}\n");
    return 0;
}
