# Timing probes of `attn_decode_chunk_mma`'s merge (hand-edited copies of generated/,
# manifest hashes replaced):
#   peek:   after the block loop, one invocation reads the sequence's arrival counter
#           (`ld.acquire.gpu`); where every other chunk has arrived, this workgroup is the
#           last: it skips the arrival's fence and atomic (resetting the counter with a
#           store) and merges as before;
#   peekpf: as peek, and that invocation then prefetches the other chunks' partial
#           results into L1 (`prefetch.global.L1`) while the workgroup runs its epilogue.
# usage: python3 probes3.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{peek,peekpf}/
import sys, re, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from probe_edit import write_probe
src, pre = sys.argv[1], sys.argv[2]
IDX = '((b_2 * pc.n_kv_heads) + kvh_1)'

def peek(s, pf=False):
    i = s.index('    float l_row_78[8];')
    pre_lines = ('    if (merges_12 && t0_3 == 0u) { unsigned int ok_seen; '
                 f'asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(ok_seen) : "l"(&arrivals[{IDX}]) : "memory"); '
                 'ok_arrival[1] = (ok_seen + 1u >= used_13) ? 1u : 0u;')
    if pf:
        pre_lines += (' if (ok_seen + 1u >= used_13) { for (unsigned int c2 = 0u; c2 < used_13; c2++) { if (c2 == c_0) continue; '
                      'for (unsigned int h = 0u; h < group_6; h++) { const float* r = &part_acc[((((b_2 * pc.n_heads) + head0_10) + h) * pc.n_chunks + c2) * 128u]; '
                      'for (unsigned int l = 0u; l < 4u; l++) asm volatile("prefetch.global.L1 [%0];" :: "l"(r + 32u * l)); } } '
                      'asm volatile("prefetch.global.L1 [%0];" :: "l"(&part_m[((b_2 * pc.n_heads) + head0_10) * pc.n_chunks])); '
                      'asm volatile("prefetch.global.L1 [%0];" :: "l"(&part_l[((b_2 * pc.n_heads) + head0_10) * pc.n_chunks])); }')
    pre_lines += ' }\n'
    s = s[:i] + pre_lines + s[i:]
    a = s.index('// last_arrival: the workgroup')
    m = re.compile(r'if \((last_\d+)\) \{ __threadfence\(\); \}').search(s, a)
    body = s[a:m.end()]
    last = m.group(1)
    new = (f'if (ok_arrival[1] != 0u) {{ {last} = true; if (ok_lindex == 0u) {{ arrivals[{IDX}] = 0u; }} }} else {{\n'
           + body + '\n        }')
    return s[:a] + new + s[m.end():]

for name, edit in [('peek', peek), ('peekpf', lambda s: peek(s, True))]:
    print(name, write_probe(src, f'{pre}-{name}', 'attn_decode_chunk_mma', edit)[:12])
