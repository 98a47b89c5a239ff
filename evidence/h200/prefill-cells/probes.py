# Bounds on what the block table costs `attn_prefill_mma`'s block loop (timing probes of
# hand-edited copies of generated/, manifest hashes replaced; results are wrong):
#   nolookup: the next block's cells without reading the block table in the loop (page
#             = logical page: the contiguous cache's addresses), the first block's
#             lookup kept;
#   page16:   the page size a constant 16 (the division and remainder become shifts).
# usage: python3 probes.py GENERATED_DIR OUT_PREFIX  -> OUT_PREFIX-{nolookup,page16}/
import sys, re, shutil, hashlib, os
src, pre = sys.argv[1], sys.argv[2]

def nolookup(s):
    loop = s.index('for (unsigned int st_')
    a = re.compile(r'page_(\d+) = \(\(unsigned int\)block_table\[logical_(\d+)\]\);').search(s, loop)
    return s[:a.start()] + f'page_{a.group(1)} = logical_{a.group(2)};' + s[a.end():]

def page16(s):
    s, n = re.subn(r'pc\.page_size', '16u', s)
    assert n > 0
    return s

for name, edit in [('nolookup', nolookup), ('page16', page16)]:
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
