# H200 call (`bash evidence/h200/prefill-two-tiles/ncu.sh`): Nsight Compute on
# `attn_prefill_mma`'s 64-token form with two row tiles per workgroup (the binary of
# .devbin/new, the generated/ of bc40161): the first 1 × 4096 launch and the first 16 × 512
# launch of `bench-prefill --runs 1` (four launches per shape: three warm-up), the full
# set, and the SASS with its warp-stall samples summed by region (prefill-pingpong/regions.py).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
for c in "1x4096 0" "16x512 8"; do
  set -- $c
  timeout 240 ncu --set full --import-source no -k regex:attn_prefill_mma --launch-skip $2 --launch-count 1 -o $E/prof-$1 $K bench-prefill --backend cuda --runs 1 > $E/ncu-run-$1.log 2>&1; echo "ncu $1 exit $?"
  ncu -i $E/prof-$1.ncu-rep --page details --print-details all > $E/details-$1.txt 2>&1
  grep -E "Grid Size|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Tensor|Warp Cycles Per Issued|DRAM Throughput|L2 Hit|Executed Ipc" $E/details-$1.txt | head -30
  ncu -i $E/prof-$1.ncu-rep --page source --csv --print-source sass > /tmp/sass-$1.csv 2>&1
  python3 evidence/h200/prefill-pingpong/regions.py /tmp/sass-$1.csv > $E/regions-$1.txt 2>&1; cat $E/regions-$1.txt
  python3 - /tmp/sass-$1.csv > $E/top-$1.txt <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
hi = [i for i, r in enumerate(rows) if r and r[0] == 'Address'][0]
head = rows[hi]
out = []
for r in rows[hi + 1:]:
    if r and r[0] == 'Kernel Name':
        break
    if len(r) > 3:
        out.append(r)
tot = sum(int(r[2] or 0) for r in out)
print(' | '.join(head[:12]))
for r in sorted(out, key=lambda r: -int(r[2] or 0))[:60]:
    print(f"{r[0]} {int(r[2] or 0):7d} {100 * int(r[2] or 0) / tot:5.2f} % | {r[1]} | " + ' | '.join(r[3:12]))
PY
done
rm -f $E/*.ncu-rep
tar czf $OUT/ev.tgz -C /tmp ev
