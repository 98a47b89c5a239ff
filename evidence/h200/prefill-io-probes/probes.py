# Timing probes of `attn_prefill_mma` (hand-edited copies of generated/, manifest hashes
# replaced so the runtime loads them; their results are wrong, only their times count):
#   q16: each Q word read as one 4-byte load of half the bytes (an f16 pair's worth, from
#        the f32 buffer: word i of the row at element offset / 2, its bits masked to two
#        finite halves below 1) and stored to the Q tile as it is, no rounding;
#   o16: each pair of adjacent output columns stored as one word of two f16 (half the
#        bytes, half the stores);
#   io16: both;
#   v2q: each pair of Q values read by one 8-byte load (`float2`), rounded as before;
#   v2o: each pair of adjacent output columns stored by one 8-byte store (`float2`):
#        the same bytes as now, in half the stores and whole 32-byte sectors;
#   v2: both;
#   nobar: (a bound) the block loop's barrier left out, its proxy fence kept;
#   noexp: (a bound) the numerators without `ex2` (the exponent itself used).
# usage: python3 probes.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{q16,o16,io16,v2q,v2o,v2,nobar,noexp}/
import sys, re, shutil, hashlib, os
src, pre = sys.argv[1], sys.argv[2]

def q16(s):
    a = re.search(r'qv_(\d+)\[\(2u \* j_(\d+)\)\] = q\[at_(\d+)\];\n(\s*// line \d+\n)?\s*qv_\1\[\(\(2u \* j_\2\) \+ 1u\)\] = q\[\(at_\3 \+ 1u\)\];', s)
    qv, j, at = a.group(1), a.group(2), a.group(3)
    s = s[:a.start()] + f'qv_{qv}[(2u * j_{j})] = __uint_as_float(__float_as_uint(q[at_{at} / 2u]) & 0x3bff3bffu);' + s[a.end():]
    b = re.search(r'\(ok_f32_to_f16\(qv_(\d+)\[\(2u \* j_(\d+)\)\]\) \| \(ok_f32_to_f16\(qv_\1\[\(\(2u \* j_\2\) \+ 1u\)\]\) << 16u\)\)', s)
    s = s[:b.start()] + f'__float_as_uint(qv_{b.group(1)}[(2u * j_{b.group(2)})])' + s[b.end():]
    return s

def o16(s):
    pat = re.compile(r'out_\[(.*)\] = \(ov_(\d+)\[e_(\d+)\] \* fr_(\d+)\[\(\(e_\3 / 2u\) % 2u\)\]\);')
    def rep(m):
        addr, ov, e, fr = m.groups()
        f = f'fr_{fr}[((e_{e} / 2u) % 2u)]'
        return (f'if ((e_{e} & 1u) == 0u) {{ ((unsigned int*)out_)[({addr}) / 2u] = '
                f'ok_f32_to_f16(ov_{ov}[e_{e}] * {f}) | (ok_f32_to_f16(ov_{ov}[e_{e} + 1u] * {f}) << 16u); }}')
    s, n = pat.subn(rep, s)
    assert n == 8, n
    return s

def v2q(s):
    a = re.search(r'qv_(\d+)\[\(2u \* j_(\d+)\)\] = q\[at_(\d+)\];\n(\s*// line \d+\n)?\s*qv_\1\[\(\(2u \* j_\2\) \+ 1u\)\] = q\[\(at_\3 \+ 1u\)\];', s)
    qv, j, at = a.group(1), a.group(2), a.group(3)
    return s[:a.start()] + (f'{{ float2 ok_v = *(const float2*)&q[at_{at}]; qv_{qv}[(2u * j_{j})] = ok_v.x; '
                            f'qv_{qv}[((2u * j_{j}) + 1u)] = ok_v.y; }}') + s[a.end():]

def v2o(s):
    pat = re.compile(r'out_\[(.*)\] = \(ov_(\d+)\[e_(\d+)\] \* fr_(\d+)\[\(\(e_\3 / 2u\) % 2u\)\]\);')
    def rep(m):
        addr, ov, e, fr = m.groups()
        f = f'fr_{fr}[((e_{e} / 2u) % 2u)]'
        return (f'if ((e_{e} & 1u) == 0u) {{ *(float2*)&out_[{addr}] = '
                f'make_float2(ov_{ov}[e_{e}] * {f}, ov_{ov}[e_{e} + 1u] * {f}); }}')
    s, n = pat.subn(rep, s)
    assert n == 8, n
    return s

def nobar(s):
    loop = s.index('for (unsigned int st_')
    i = s.index('ok_panel_barrier();', loop)
    return s[:i] + 'asm volatile("fence.proxy.async.shared::cta;" ::: "memory");' + s[i + len('ok_panel_barrier();'):]

def noexp(s):
    pat = re.compile(r'(f\d_\d+\[e_\d+\] = )ok_fast_exp2\(')
    s, n = pat.subn(r'\1ok_noexp(', s)
    assert n == 4, n
    h = s.index('static __device__ __forceinline__ float ok_fast_exp2')
    return s[:h] + 'static __device__ __forceinline__ float ok_noexp(float x) { return x; }\n' + s[h:]

for name, edit in [('q16', q16), ('o16', o16), ('io16', lambda s: o16(q16(s))), ('v2q', v2q), ('v2o', v2o), ('v2', lambda s: v2o(v2q(s))), ('nobar', nobar), ('noexp', noexp)]:
    dst = f'{pre}-{name}'
    shutil.rmtree(dst, ignore_errors=True); shutil.copytree(src, dst)
    p = os.path.join(dst, 'cuda/attn_prefill_mma.cu')
    s = open(p).read(); old = hashlib.sha256(s.encode()).hexdigest()
    s = edit(s)
    open(p, 'w').write(s)
    new = hashlib.sha256(s.encode()).hexdigest()
    m = os.path.join(dst, 'manifest.json'); t = open(m).read(); assert t.count(old) == 1
    open(m, 'w').write(t.replace(old, new))
    print(name, new[:12])
