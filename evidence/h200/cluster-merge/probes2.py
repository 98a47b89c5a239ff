# Timing probes of `attn_prefill_mma`'s copies (hand-edited copies of a generated/
# directory, manifest hashes replaced; `nowait` gives wrong results):
#   nowait: the block loop's wait for its copies removed (the barrier kept): a bound on
#           the copies' latency as the step sees it;
#   cg:     the 16-byte copies bypass L1 (`cp.async.cg`) instead of allocating in it.
# usage: python3 probes2.py GENERATED_DIR OUT_PREFIX NAME...  -> OUT_PREFIX-NAME/
import sys, re, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre, names = sys.argv[1], sys.argv[2], sys.argv[3:]

def nowait(s):
    loop = s.index('for (unsigned int st_')
    m = re.compile(r'ok_async_wait<\d+>\(\);').search(s, loop)
    return s[:m.start()] + s[m.end():]

def cg(s):
    a = 'OK_ASYNC_COPY(16)'
    assert s.count(a) == 1
    return s.replace(a, '''static __device__ __forceinline__ void ok_async_copy16(void* dst, const void* src) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"((unsigned int)__cvta_generic_to_shared(dst)), "l"(src) : "memory"); }''')

for name in names:
    edit = {'nowait': nowait, 'cg': cg}[name]
    print(name, write_probe(src, f'{pre}-{name}', 'attn_prefill_mma', edit)[:12])
