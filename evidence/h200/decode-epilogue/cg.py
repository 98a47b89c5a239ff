# A copy of a generated dir whose 16-byte asynchronous copies in attn_decode_chunk_mma
# bypass L1 (cp.async.cg) instead of allocating in it (cp.async.ca).
import sys, shutil, hashlib, os
src, dst = sys.argv[1], sys.argv[2]
shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
p = os.path.join(dst, 'cuda/attn_decode_chunk_mma.cu')
s = open(p).read(); old_hash = hashlib.sha256(s.encode()).hexdigest()
old = 'OK_ASYNC_COPY(16)\n'
new = ('static __device__ __forceinline__ void ok_async_copy16(void* dst, const void* src) {\n'
       '    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src) : "memory");\n'
       '}\n')
assert s.count(old) == 1
s = s.replace(old, new)
open(p, 'w').write(s)
new_hash = hashlib.sha256(s.encode()).hexdigest()
m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old_hash) == 1
open(m, 'w').write(t.replace(old_hash, new_hash))
