# The kernel and its runtime form are in a39c1ac (reverted after these calls): build that commit to rerun.
# Timing probe of `attn_prefill_pingpong`: a copy of generated/ whose CUDA runs both
# warpgroups in lockstep (each multiplies in the same phase and runs its softmax in the
# next: `p - wg` becomes `p - 0`), manifest hash replaced so the runtime loads it.
# usage: python3 variants.py GENERATED_DIR OUT_DIR
import sys, re, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_prefill_pingpong.cu')
s = open(p).read(); old = hashlib.sha256(s.encode()).hexdigest()
s, n1 = re.subn(r'\(p_(\d+) >= wg_\d+\)', r'(p_\1 >= 0u)', s)
s, n2 = re.subn(r'\(p_(\d+) - wg_\d+\)', r'(p_\1 - 0u)', s)
assert n1 == 1 and n2 == 1, (n1, n2)
open(p, 'w').write(s)
new = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old) == 1
open(m, 'w').write(t.replace(old, new))
print('lockstep', new[:12])
