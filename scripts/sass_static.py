#!/usr/bin/env python3
"""Static instruction counts of `cuobjdump -sass` listings: per function, the number of
SASS instructions and the opcode mix (the listing, not executed counts; for those see
scripts/sass_profile.py). scripts/gpu-profile-tensor-cores.sh writes the listings.

    python3 scripts/sass_static.py sass-attn_decode_chunk_mma-h100.txt [FUNCTION_REGEX]
"""
import re
import sys
from collections import Counter

from sass_profile import opcode

INSTR = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;")


def functions(path):
    name, ops = None, []
    for line in open(path, errors="replace"):
        if "Function :" in line:
            if name:
                yield name, ops
            name, ops = line.split("Function :")[1].strip(), []
        elif name:
            m = INSTR.match(line)
            if m:
                ops.append(opcode(m.group(1)))
    if name:
        yield name, ops


def main():
    path = sys.argv[1]
    wanted = re.compile(sys.argv[2]) if len(sys.argv) > 2 else None
    for name, ops in functions(path):
        if wanted and not wanted.search(name):
            continue
        real = [o for o in ops if o != "NOP"]
        mix = Counter(real)
        print(f"{name}: {len(real)} instructions (NOPs excluded)")
        print("  " + ", ".join(f"{op} {n}" for op, n in mix.most_common(20)))


if __name__ == "__main__":
    main()
