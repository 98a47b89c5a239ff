# The kernel of .devbin/new is 7b555ec with kernel.patch applied (not kept); regenerate generated/ after applying it.
# Timing probe of `attn_prefill_mma`'s 64-token form (the tree's order: each step issues
# its S and the block before's `P · V` together): a copy of generated/ whose CUDA waits,
# right after issuing them, only for S (`wgmma.wait_group 4`: `P · V`, the four newest
# groups, runs on beside the copies and the softmax), the later `tile_mma_wait()`
# completing `P · V`. The DSL's `tile_mma_wait()` waits for every product. ptxas takes
# the partial wait only in straight-line code after the products: placed after the
# copies (branches between), it serialized every `wgmma` (warning C7514).
# Manifest hash replaced so the runtime loads the copy.
# usage: python3 variants.py GENERATED_DIR OUT_DIR
import sys, re, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_prefill_mma.cu')
s = open(p).read(); old = hashlib.sha256(s.encode()).hexdigest()
L = s.split('\n')
loop = next(i for i, l in enumerate(L) if re.search(r'for \(unsigned int st_\d+ = 0u;', l))
# The first wait after the loop head (after the copies) goes; a partial one follows P · V.
w = next(i for i in range(loop, len(L)) if L[i].strip().startswith('ok_tile_mma_wait();'))
pv = [i for i in range(loop, len(L)) if 'ok_tile_mma_panel8<true>(tl_o0' in L[i]][3]
ind = L[w][:len(L[w]) - len(L[w].lstrip())]
partial = (ind + 'asm volatile("wgmma.wait_group.sync.aligned 4;" ::: "memory"); '
           'ok_tile_fence_acc(tl_s0); ok_tile_fence_acc(tl_s1); ok_tile_fence_acc(tl_s2); ok_tile_fence_acc(tl_s3);')
L = L[:pv + 1] + [partial] + L[pv + 1:w] + L[w + 1:]
s = '\n'.join(L)
open(p, 'w').write(s)
new = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old) == 1
open(m, 'w').write(t.replace(old, new))
print('pv-beside', new[:12])
