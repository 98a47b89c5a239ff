#!/usr/bin/env python3
"""Summarize Nsight Compute's per-SASS-instruction counters of one kernel launch.

Input: the CSV of `ncu -i REPORT --page source --csv --print-source sass` for a report
collected with `--section SourceCounters`. Output (stdout): executed warp instructions
in all, the opcode mix, the warp-stall mix, and the hottest straight-line regions
(consecutive instructions with the same execution count, i.e. one loop body or block),
each with its share of the instructions and its opcode mix.

    python3 scripts/sass_profile.py attn-sass.csv [regions]
"""
import csv
import sys
from collections import Counter


def opcode(src):
    parts = src.split()
    if not parts:
        return ""
    op = parts[1] if parts[0].startswith("@") and len(parts) > 1 else parts[0]
    return op.split(".")[0]


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rows = list(csv.reader(open(path, newline="")))
    header_at = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
    hdr = rows[header_at]
    ix = {h: i for i, h in enumerate(hdr)}
    stalls = [h for h in hdr if h.startswith("stall_") and "Not Issued" not in h]
    kernel = rows[header_at - 1][1] if header_at > 0 and len(rows[header_at - 1]) > 1 else "?"
    ins = []
    stall_total = Counter()
    for r in rows[header_at + 1:]:
        try:
            n = int(r[ix["Instructions Executed"]].replace(",", ""))
        except (ValueError, IndexError):
            continue
        ins.append((r[ix["Address"]], opcode(r[ix["Source"]]), n))
        for s in stalls:
            stall_total[s[len("stall_"):]] += int(r[ix[s]] or 0)
    total = sum(n for _, _, n in ins)
    print(f"kernel: {kernel}")
    print(f"executed warp instructions: {total}")
    mix = Counter()
    for _, op, n in ins:
        mix[op] += n
    print("opcode mix (% of executed): " + ", ".join(f"{op} {100 * n / total:.1f}" for op, n in mix.most_common(16)))
    st = sum(stall_total.values()) or 1
    print("warp-stall samples (%): " + ", ".join(f"{s} {100 * n / st:.1f}" for s, n in stall_total.most_common(9)))
    regions = []
    for addr, op, n in ins:
        if regions and regions[-1]["n"] == n:
            regions[-1]["end"] = addr
            regions[-1]["ops"].append(op)
        else:
            regions.append({"start": addr, "end": addr, "n": n, "ops": [op]})
    print(f"hottest regions (start-end, executions, length, % of executed, opcode mix):")
    for g in sorted(regions, key=lambda g: -g["n"] * len(g["ops"]))[:top]:
        share = 100 * g["n"] * len(g["ops"]) / total
        mixr = Counter(g["ops"]).most_common(8)
        print(f"  {g['start'][-5:]}-{g['end'][-5:]}  x{g['n']:>8}  {len(g['ops']):>4} instr  {share:5.1f} %  " + " ".join(f"{o}:{c}" for o, c in mixr))


if __name__ == "__main__":
    main()
