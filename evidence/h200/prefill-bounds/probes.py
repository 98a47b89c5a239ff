# Timing probes of hand-edited copies of generated/ for attn_prefill_mma (two row tiles
# per workgroup, the kernel of 00a4cbd), each a wrong result and a bound on what moving
# work off the computing warps could save (manifest hashes replaced, prefill-persistent's
# tried ideas and docs/PERFORMANCE.md "What cuDNN runs"):
#   nocopy: the block loop's 16-byte K/V copies removed (the K/V buffers zeroed once);
#   noq: the Q rows' global loads replaced by a constant (no Q traffic or latency).
# (Without the copies nvcc also drops the cells' shared stores and the block table's
# loads, which only the copies read: the nocopy kernel has no page work either.)
# usage: python3 probes.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{nocopy,noq}/
import sys, re, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre = sys.argv[1], sys.argv[2]


def nocopy(s):
    s, n = re.subn(r'ok_async_copy16_past_l1\(&sh_kv\[[kv]d_\d+\], &[kv]\[srcs_\d+\[j_\d+\]\]\);', '', s)
    assert n == 2, n
    i = s.index('ok_panel_barrier();', s.index('unsigned int* const sh_kv'))
    return s[:i] + 'for (unsigned int z = threadIdx.x; z < (kv64 ? 17408u : 4352u); z += 256u) sh_kv[z] = 0u; ' + s[i:]


def noq(s):
    s, n = re.subn(r'const float2 ok_lw = \*reinterpret_cast<const float2\*>\(&q\[at_\d+\]\);', 'const float2 ok_lw = make_float2(0.25f, -0.5f);', s)
    assert n == 1, n
    return s


for name, edit in [('nocopy', nocopy), ('noq', noq)]:
    print(name, write_probe(src, f'{pre}-{name}', 'attn_prefill_mma', edit)[:12])
