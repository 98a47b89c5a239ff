# H200 call 3: Nsight Compute on the first 1 × 4096 launch of `bench-prefill --runs 1`,
# the kernel of this tree and the probe's `wsn` form (probe.py), the stall-reason
# breakdown and the warp samples by SASS region (prefill-pingpong/regions.py) and by
# instruction.
. evidence/h200/device_prelude.sh
E=$OUT/ev; mkdir -p $E
python3 evidence/h200/prefill-ws/probe.py generated /tmp/pw > /dev/null
for c in "kernel generated" "wsn /tmp/pw-wsn"; do
  set -- $c
  timeout 150 ncu --section WarpStateStats --section SchedulerStats --section SourceCounters --section LaunchStats --section Occupancy --import-source no -k regex:attn_prefill_mma --launch-skip 0 --launch-count 1 -o /tmp/prof-$1 $K bench-prefill --backend cuda --runs 1 --out $2 > $E/ncu-run-$1.log 2>&1; echo "ncu $1 exit $?"
  ncu -i /tmp/prof-$1.ncu-rep --page details --print-details all > $E/details-$1.txt 2>&1
  grep -E "Duration|Registers Per|Block Size|Issue Slots Busy|Eligible Warps|Active Warps Per|No Eligible|Warp Cycles Per Issued|Stall" $E/details-$1.txt | head -40
  ncu -i /tmp/prof-$1.ncu-rep --page raw --csv > $E/raw-$1.csv 2>&1
  python3 - $E/raw-$1.csv <<'PY' | tee $E/stalls-$1.txt
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
h, u, v = rows[0], rows[1], rows[2]
for i, n in enumerate(h):
    if 'smsp__average_warps_issue_stalled_' in n and n.endswith('per_issue_active.ratio'):
        try:
            x = float(v[i])
        except ValueError:
            continue
        if x > 0.02:
            print(f"{n.replace('smsp__average_warps_issue_stalled_', '').replace('_per_issue_active.ratio', ''):28s} {x:.3f}")
PY
  ncu -i /tmp/prof-$1.ncu-rep --page source --csv --print-source sass > /tmp/sass-$1.csv 2>&1
  python3 evidence/h200/prefill-pingpong/regions.py /tmp/sass-$1.csv > $E/regions-$1.txt 2>&1; cat $E/regions-$1.txt
done
