#!/usr/bin/env bash
# One device call: Nsight Compute of the KV-quant score kernels (TBQ4, QJL, Polar at
# L = 65536, 8 / 8 heads: the fourth dispatch of `bench-kvquant --quick`, its first timed
# single dispatch) with the sections that say what binds them — speed of light, the
# compute pipes, the memory tables, warp states, scheduler, occupancy, instruction mix —
# and the per-instruction counters summarized by scripts/sass_profile.py. Run on the GPU
# machine from the repository root with .devbin/onekernel and .gl carried; writes
# $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-400}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
sections="--section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section SourceCounters"
for k in ${KERNELS:-turbo_score qjl_score polar_score}; do
  [ $(left) -lt 60 ] && break
  timeout $(( $(left) - 30 )) ncu --kernel-name regex:$k --launch-skip 3 --launch-count 1 $sections -o /tmp/$k \
    .devbin/onekernel bench-kvquant --quick --runs 5 --backend cuda > /dev/null 2>&1
  echo "ncu $k rc $?" >> $log
  ncu -i /tmp/$k.ncu-rep --page details > $E/ncu-$k-$gpu.log 2>&1
  ncu -i /tmp/$k.ncu-rep --page source --csv --print-source sass > /tmp/$k-sass.csv 2>/dev/null
  python3 scripts/sass_profile.py /tmp/$k-sass.csv 10 > $E/sass-$k-profile-$gpu.txt 2>&1 || true
done
echo "done $(date +%T)" >> $log
