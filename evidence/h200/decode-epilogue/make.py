# Build a probe copy of a generated dir: attn_decode_chunk_mma's CUDA prints, per
# workgroup, globaltimer at entry, first data, loop end, arrival, end.
import sys, re, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_decode_chunk_mma.cu')
s = open(p).read(); old_hash = hashlib.sha256(s.encode()).hexdigest()
helpers = '''
static __device__ __forceinline__ unsigned long long ok_gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
static __device__ __forceinline__ unsigned int ok_smid() { unsigned int r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ unsigned long long ok_probe_count[2];
__shared__ unsigned long long ok_probe_tf, ok_probe_t1, ok_probe_ta;
'''
a = '// Bytes of dynamic shared memory an instance'
s = s.replace(a, helpers + a, 1)
s, n = re.subn(r'(ok_async_wait<0>\(\);\n\s*\}\n\s*// line \d+\n\s*__syncthreads\(\);)', r'\1\n                if (st_44 == 1u && threadIdx.x == 0u) { ok_probe_tf = ok_gt(); }', s, count=1); assert n == 1
s = s.replace('st_44 == 1u', re.search(r'for \(unsigned int (st_\d+) = 0u; st_\d+ < ok_end', s).group(1) + ' == 1u')
s, n = re.subn(r'(\n    // line \d+\n    float l_row_\d+\[8\];)', r'\n    if (threadIdx.x == 0u) { ok_probe_t1 = ok_gt(); }\1', s, count=1); assert n == 1
s, n = re.subn(r'(\n\s*// last_arrival:)', r'\n        if (threadIdx.x == 0u) { ok_probe_ta = ok_gt(); }\1', s, count=1); assert n == 1
old = re.search(r'        attn_decode_chunk_mma_impl<__VA_ARGS__>\([^\n]*\); \\\n    \} \\\n', s).group(0)
call = old.split('\n')[0]
new = '''        unsigned long long ok_t0 = ok_gt(); \\
        if (threadIdx.x == 0) { ok_probe_tf = 0; ok_probe_t1 = 0; ok_probe_ta = 0; } \\
''' + call + '''
        __syncthreads(); \\
        if (threadIdx.x == 0 && ok_probe_on<__VA_ARGS__>()) { \\
            unsigned long long ok_t2 = ok_gt(); \\
            unsigned int fin = ok_probe_fin<__VA_ARGS__>(); \\
            unsigned long long n = atomicAdd(&ok_probe_count[fin], 1ull); \\
            unsigned long long nb = (unsigned long long)gridDim.x * gridDim.y * gridDim.z; \\
            printf("P %u %llu %u %u %u %u %llu %llu %llu %llu %llu\\n", fin, n / nb, blockIdx.x, blockIdx.y, blockIdx.z, ok_smid(), ok_t0, ok_probe_tf, ok_probe_t1, ok_probe_ta, ok_t2); \\
        } \\
    } \\
'''
s = s.replace(old, new)
tmpl = '''template <bool paged, unsigned int stages, bool finish> static __device__ __forceinline__ bool ok_probe_on() { return paged && stages == 2u; }
template <bool paged, unsigned int stages, bool finish> static __device__ __forceinline__ unsigned int ok_probe_fin() { return finish ? 1u : 0u; }
'''
a = '// One `extern "C"` entry per instance'
s = s.replace(a, tmpl + a, 1)
open(p, 'w').write(s)
new_hash = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old_hash) == 1
open(m, 'w').write(t.replace(old_hash, new_hash))
