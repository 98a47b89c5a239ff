# Build a probe copy of a generated dir: attn_prefill_mma's CUDA (paged, kv64) prints, per
# workgroup of the first launch of each grid, %globaltimer at entry, Q and cells ready,
# first block arrived, block loop end, end (and its SM). Nothing of it is in the kernel.
import sys, re, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_prefill_mma.cu')
s = open(p).read(); old_hash = hashlib.sha256(s.encode()).hexdigest()
helpers = '''
static __device__ __forceinline__ unsigned long long ok_gt() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
static __device__ __forceinline__ unsigned int ok_smid() { unsigned int r; asm volatile("mov.u32 %0, %%smid;" : "=r"(r)); return r; }
__device__ unsigned long long ok_probe_count[8];
__shared__ unsigned long long ok_probe_tq, ok_probe_tf, ok_probe_tl, ok_probe_tw, ok_probe_tc;
'''
a = '// Bytes of dynamic shared memory an instance'
assert s.count(a) == 1; s = s.replace(a, helpers + a, 1)
# Q tile and first cells stored: the first barrier of the kernel body.
s, n = re.subn(r'(\n    ok_panel_barrier\(\);\n)', r'\1    if (threadIdx.x == 0u) { ok_probe_tq = ok_gt(); }\n', s, count=1); assert n == 1
# After the grid dependency wait, and after the Q tile's loop (before the first cells).
s, n = re.subn(r'(attn_prefill_mma_impl\([^\n]*\{\n    ok_grid_dependency_wait\(\);\n)', r'\1    if (threadIdx.x == 0u) { ok_probe_tw = ok_gt(); }\n', s, count=1); assert n == 1
s, n = re.subn(r'(\n    // line \d+\n    if \(\(t0_\d+ < kb_\d+\)\) \{)', r'\n    if (threadIdx.x == 0u) { ok_probe_tc = ok_gt(); }\1', s, count=1); assert n == 1
st = re.search(r'for \(unsigned int (st_\d+) = 0u; st_\d+ < ok_end', s).group(1)
s, n = re.subn(r'(ok_async_wait<0>\(\);\n\s*// line \d+\n\s*ok_panel_barrier\(\);)', r'\1\n                if (%s == 1u && threadIdx.x == 0u) { ok_probe_tf = ok_gt(); }' % st, s, count=1); assert n == 1
s, n = re.subn(r'(\n    // line \d+\n    ok_tile_mma_wait\(\);[^\n]*\n    // line \d+\n    float l_row_\d+\[8\];)', r'\n    if (threadIdx.x == 0u) { ok_probe_tl = ok_gt(); }\1', s, count=1); assert n == 1
old = re.search(r'        attn_prefill_mma_impl<__VA_ARGS__>\([^\n]*\); \\\n    \} \\\n', s).group(0)
call = old.split('\n')[0]
new = '''        unsigned long long ok_t0 = ok_gt(); \\
        if (threadIdx.x == 0) { ok_probe_tq = 0; ok_probe_tf = 0; ok_probe_tl = 0; ok_probe_tw = 0; ok_probe_tc = 0; } \\
''' + call + '''
        __syncthreads(); \\
        if (threadIdx.x == 0 && ok_probe_on<__VA_ARGS__>() && (gridDim.z == 16u || gridDim.x == 64u)) { \\
            unsigned long long ok_t2 = ok_gt(); \\
            unsigned int slot = gridDim.z == 16u ? 0u : 1u; \\
            unsigned long long n = atomicAdd(&ok_probe_count[slot], 1ull); \\
            unsigned long long nb = (unsigned long long)gridDim.x * gridDim.y * gridDim.z; \\
            if (n < nb) printf("P %u %u %u %u %u %llu %llu %llu %llu %llu %llu %llu\\n", slot, blockIdx.x, blockIdx.y, blockIdx.z, ok_smid(), ok_t0, ok_probe_tq, ok_probe_tf, ok_probe_tl, ok_t2, ok_probe_tw, ok_probe_tc); \\
        } \\
    } \\
'''
s = s.replace(old, new)
tmpl = '''template <bool paged, bool kv64> static __device__ __forceinline__ bool ok_probe_on() { return paged && kv64; }
'''
a = '// One `extern "C"` entry per instance'
s = s.replace(a, tmpl + a, 1)
open(p, 'w').write(s)
new_hash = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old_hash) == 1
open(m, 'w').write(t.replace(old_hash, new_hash))
