# Timing probes of hand-edited copies of generated/ (manifest hashes replaced):
#   decode (attn_decode_chunk_mma, sequences of two chunks):
#     nomerge: the last arrival's merge skipped (wrong output; a bound on the merge);
#     cbar:    each pair of chunks a cluster of two workgroups (`__cluster_dims__(2,1,1)`);
#              the arrival (fence, atomic) replaced by the cluster's barrier, rank 0 merges
#              the partial results from global memory as before;
#     dsmem:   as cbar, the partial results written into rank 0's shared memory
#              (distributed shared memory, `st.shared::cluster`) instead of global memory,
#              rank 0 merging from there.
#   prefill (attn_prefill_mma): nocopy: the block loop's 16-byte copies (and their
#     address arithmetic) removed, the K/V buffers zeroed once (wrong output; a bound on
#     what copies issued by other warps or by TMA could save the computing warps).
# usage: python3 probes.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{nomerge,cbar,dsmem,nocopy}/
import sys, re, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre = sys.argv[1], sys.argv[2]

def sub1(pat, rep, s, flags=0):
    s2, n = re.subn(pat, rep, s, flags=flags)
    assert n == 1, (pat, n)
    return s2

def nomerge(s):
    return sub1(r'if \((merges_\d+)\) \{', r'if (false && \1) {', s)

RANK = 'unsigned int ok_rank; asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(ok_rank));'
ARRIVE = ('asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); '
          'asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");')

def cluster_dims(s):
    return sub1(r'extern "C" __global__ void __launch_bounds__', 'extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__', s)

def arrival_block(s):
    a = s.index('// last_arrival: the workgroup')
    m = re.compile(r'if \((last_\d+)\) \{ __threadfence\(\); \}').search(s, a)
    last = m.group(1)
    return s[:a] + f'{RANK} {ARRIVE} {last} = ok_rank == 0u;\n' + s[m.end():]

def cbar(s):
    return arrival_block(cluster_dims(s))

def dsmem(s):
    s = cluster_dims(s)
    # An exchange area of two chunks × (16 maxima, 16 sums, 16 × 128 values), and the
    # cluster's first phase (every workgroup started) before any remote store.
    body = s.index('_impl(')
    brace = s.index('{', body)
    s = s[:brace + 1] + ('\n    __shared__ unsigned int ok_xchg[2 * 2080];\n'
        '    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");\n') + s[brace + 1:]
    def remote(idx, val):
        return ('{ unsigned int ok_l = (unsigned int)__cvta_generic_to_shared(&ok_xchg[' + idx + ']); unsigned int ok_r; '
                'asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(ok_r) : "r"(ok_l), "r"(0)); '
                'asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(ok_r), "r"(__float_as_uint(' + val + ')) : "memory"); }')
    m = re.search(r'part_m\[(row_\d+)\] = (m_\d+);\s*// line \d+\s*part_l\[row_\d+\] = (l_\d+);', s)
    h = re.search(r'unsigned int (row_\d+) = \(\(\(\(\(b_\d+ \* pc\.n_heads\) \+ head0_\d+\) \+ (h_\d+)\) \* pc\.n_chunks\) \+ (c_\d+)\);', s)
    hv, cv = h.group(2), h.group(3)
    s = s[:m.start()] + (remote(f'{cv} * 2080u + {hv}', m.group(2)) + ' ' + remote(f'{cv} * 2080u + 16u + {hv}', m.group(3))) + s[m.end():]
    m = re.search(r'part_acc\[\(\(\(\(\(\(\(b_\d+ \* pc\.n_heads\) \+ head0_\d+\) \+ (h_\d+)\) \* pc\.n_chunks\) \+ (c_\d+)\) \* 128u\) \+ (d_\d+)\)\] = (acc_\d+);', s)
    s = s[:m.start()] + remote(f'{m.group(2)} * 2080u + 32u + {m.group(1)} * 128u + {m.group(3)}', m.group(4)) + s[m.end():]
    # The arrival: the first phase's wait, then the stores' release and the second phase.
    a = s.index('// last_arrival: the workgroup')
    m = re.compile(r'if \((last_\d+)\) \{ __threadfence\(\); \}').search(s, a)
    s = s[:a] + f'{RANK} {ARRIVE} {m.group(1)} = ok_rank == 0u;\n' + s[m.end():]
    # The first phase's wait before the partial results are stored.
    p = s.index('{ unsigned int ok_l')
    line = s.rfind('\n', 0, s.rfind('if ((t0_', 0, p))
    s = s[:line] + '\n    asm volatile("barrier.cluster.wait.aligned;" ::: "memory");' + s[line:]
    # The merge reads the exchange area.
    s, n = re.subn(r'part_m\[\(row_\d+ \+ (c2_\d+)\)\]', r'__uint_as_float(ok_xchg[\1 * 2080u + t0_3])', s)
    assert n == 2, n
    s = sub1(r'part_l\[\(row_\d+ \+ (c2_\d+)\)\]', r'__uint_as_float(ok_xchg[\1 * 2080u + 16u + t0_3])', s)
    s = sub1(r'part_acc\[\(\(\(row_\d+ \+ (c2_\d+)\) \* 128u\) \+ (d_\d+)\)\]', r'__uint_as_float(ok_xchg[\1 * 2080u + 32u + h_117 * 128u + \2])', s)
    return s

def nocopy(s):
    s, n = re.subn(r'ok_async_copy16\(&sh_kv\[[kv]d_\d+\], &[kv]\[srcs_\d+\[j_\d+\]\]\);', '', s)
    assert n == 2, n
    # zero the buffers once, before the kernel's first barrier
    i = s.index('ok_panel_barrier();', s.index('unsigned int* const sh_kv'))
    return s[:i] + 'for (unsigned int z = threadIdx.x; z < (kv64 ? 17408u : 4352u); z += 128u) sh_kv[z] = 0u; ' + s[i:]

for name, kern, edit in [('nomerge', 'attn_decode_chunk_mma', nomerge), ('cbar', 'attn_decode_chunk_mma', cbar),
                         ('dsmem', 'attn_decode_chunk_mma', dsmem), ('nocopy', 'attn_prefill_mma', nocopy)]:
    print(name, write_probe(src, f'{pre}-{name}', kern, edit)[:12])
