# Timing probe of `attn_prefill_mma`'s 64-token form: a copy of generated/ whose CUDA
# issues a step's S = Q · Kᵀ before waiting for the previous block's P · V (then
# `wgmma.wait_group 8`: every group but S's eight), so that S queues behind P · V on
# the tensor cores instead of starting after its completion was seen. The DSL's
# `tile_mma_wait()` waits for every product. Manifest hash replaced so the runtime
# loads the copy. usage: python3 probe.py GENERATED_DIR OUT_DIR
import sys, re, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_prefill_mma.cu')
s = open(p).read(); old = hashlib.sha256(s.encode()).hexdigest()
L = s.split('\n')
loop = next(i for i, l in enumerate(L) if re.search(r'for \(unsigned int st_\d+ = 0u;', l))
w = next(i for i in range(loop, len(L)) if L[i].strip().startswith('ok_tile_mma_wait();'))
last_s = next(i for i in range(w, len(L)) if 'ok_tile_mma_panel<false>(tl_s0' in L[i] and 'tl_q7' in L[i])
ind = L[last_s][:len(L[last_s]) - len(L[last_s].lstrip())]
fences = ' '.join([f'ok_tile_fence_acc(tl_o{j});' for j in range(8)] + [f'ok_tile_fence_a(tl_{t});' for t in ['ta', 'p1', 'p2', 'p3']])
partial = ind + 'asm volatile("wgmma.wait_group.sync.aligned 8;" ::: "memory"); ' + fences
L = L[:w] + L[w + 1:last_s + 1] + [partial] + L[last_s + 1:]
s = '\n'.join(L)
open(p, 'w').write(s)
new = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old) == 1
open(m, 'w').write(t.replace(old, new))
print('s-first', new[:12])
