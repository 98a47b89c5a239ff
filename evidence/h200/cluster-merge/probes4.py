# Timing probes of `attn_prefill_mma`'s copies (hand-edited copies of generated/, manifest
# hashes replaced; wrong results):
#   sameaddr: every copy reads the cache's first K or V row (each invocation its own 16
#             bytes of it) through L1 (`cp.async.ca`): the copies' instructions as
#             before, their traffic from L2 gone (L1 hits);
#   nocopy:   the block loop's copies removed, the K/V buffers zeroed once.
# usage: python3 probes4.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{sameaddr,nocopy}/
import sys, re, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre = sys.argv[1], sys.argv[2]

def sameaddr(s):
    s, n = re.subn(r'ok_async_copy16_past_l1\(&sh_kv\[([kv]d_\d+)\], &([kv])\[srcs_\d+\[j_\d+\]\]\);',
                   r'ok_async_copy16(&sh_kv[\1], &\2[(t0_3 % 16u) * 4u]);', s)
    assert n == 2, n
    return s

def nocopy(s):
    s, n = re.subn(r'ok_async_copy16_past_l1\(&sh_kv\[[kv]d_\d+\], &[kv]\[srcs_\d+\[j_\d+\]\]\);', '', s)
    assert n == 2, n
    i = s.index('ok_panel_barrier();', s.index('unsigned int* const sh_kv'))
    return s[:i] + 'for (unsigned int z = threadIdx.x; z < (kv64 ? 17408u : 4352u); z += 128u) sh_kv[z] = 0u; ' + s[i:]

for name, edit in [('sameaddr', sameaddr), ('nocopy', nocopy)]:
    print(name, write_probe(src, f'{pre}-{name}', 'attn_prefill_mma', edit)[:12])
