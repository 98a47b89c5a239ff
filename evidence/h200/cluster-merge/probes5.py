# Timing probes of cluster launches alone (hand-edited copies of generated/, manifest
# hashes replaced; the kernels' code otherwise unchanged, results as the kernel's):
#   dclus: `attn_decode_chunk_mma` compiled with `__cluster_dims__(2, 1, 1)`: a sequence's
#          two chunks (grid x) co-scheduled in one GPC, the arrival and merge as before;
#   pclus: `attn_prefill_mma` with `__cluster_dims__(4, 1, 1)`: the four query heads of a
#          KV head (grid x) at one query block co-scheduled in one GPC.
# usage: python3 probes5.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{dclus,pclus}/
import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre = sys.argv[1], sys.argv[2]

def cluster(n):
    def edit(s):
        a = 'extern "C" __global__ void __launch_bounds__'
        assert s.count(a) == 1
        return s.replace(a, f'extern "C" __global__ void __cluster_dims__({n}, 1, 1) __launch_bounds__')
    return edit

for name, kern, edit in [('dclus', 'attn_decode_chunk_mma', cluster(2)), ('pclus', 'attn_prefill_mma', cluster(4))]:
    print(name, write_probe(src, f'{pre}-{name}', kern, edit)[:12])
