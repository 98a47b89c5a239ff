# Warp-stall samples of the first kernel in an Nsight Compute source export
# (`ncu -i REP --page source --csv --print-source sass > sass-source.csv`), summed over
# regions of the SASS that start at a landmark instruction (barrier, wgmma, copies, the
# softmax's shuffles, redux, exp2 and packs, the waits): where the warps spent their time.
# usage: python3 regions.py sass-source.csv
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = [i for i, r in enumerate(rows) if r and r[0] == 'Address'][0]
out = []
for r in rows[hi + 1:]:
    if r and r[0] == 'Kernel Name':
        break
    if len(r) > 3:
        out.append((int(r[0], 16), r[1], int(r[2] or 0)))
base = out[0][0]
marks = ['BAR.SYNC', 'HGMMA', 'MUFU.EX2', 'LDGSTS', 'REDUX', 'WARPGROUP.DEPBAR', 'DEPBAR.LE SB', 'SHFL', 'F2FP', 'EXIT', 'LDG.E ']
seg, cur, start, label = [], 0, 0, 'entry'
for a, src, s in out:
    key = next((k for k in reversed(marks) if k in src), None)
    if key and key != label:
        seg.append((start, label, cur))
        cur, start, label = 0, a - base, key
    cur += s
seg.append((start, label, cur))
tot = sum(x[2] for x in out)
print(f"{rows[hi - 1][1] if hi else ''}: {len(out)} instructions, {tot} samples")
print("offset  region starting at        samples  share")
for st, l, c in seg:
    if c > tot * 0.004:
        print(f"{st:6x}  {l:24s} {c:8d} {100 * c / tot:5.1f} %")
