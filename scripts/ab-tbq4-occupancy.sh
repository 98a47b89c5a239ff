#!/usr/bin/env bash
# One device call (with docs/experiments/tbq4-position-tables.patch applied and generated):
# `tbq4_score` as generated (launch bounds 512 × 1: the allocator may
# take 128 registers, so one workgroup per SM) against the same source with
# `__launch_bounds__(512, 2)` edited into a copy of generated/ (≤ 64 registers, two
# workgroups per SM), and the previous commit's `turbo_score` (BASE_GEN / BASE_BIN):
# ptxas and SASS of both forms, bench-kvquant --quick alternating, within BUDGET_S.
# Run on the GPU machine from the repository root with .devbin and .gl carried; writes
# $OUT/ev.tgz.
set -uo pipefail
source scripts/device-env.sh
ev_start
BASE_GEN=${BASE_GEN:-.devbin/gen-base}; BASE_BIN=${BASE_BIN:-.devbin/onekernel-base}
rm -rf /tmp/gen-lb2 && cp -r generated /tmp/gen-lb2
sed -i 's/__launch_bounds__(512, 1)/__launch_bounds__(512, 2)/' /tmp/gen-lb2/cuda/tbq4_score.cu
for g in generated /tmp/gen-lb2; do
  n=$(basename $g); echo "-- $g"
  nvcc -arch=sm_90 -cubin -o /tmp/$n.cubin --resource-usage $g/cuda/tbq4_score.cu 2>&1 | grep -E "Function properties|registers|spill" | sed 's/^ptxas info *: //'
  cuobjdump -sass /tmp/$n.cubin > $E/sass-tbq4_score-$n.txt 2>&1
done > $E/ptxas-tbq4-h200.log 2>&1
for i in 1 2; do
  for g in generated /tmp/gen-lb2; do
    timeout 60 .devbin/onekernel bench-kvquant --quick --backend cuda --out $g > $E/quick-$(basename $g)-$i.log 2>&1; echo "$g $i rc $?" >> $log
  done
  timeout 60 $BASE_BIN bench-kvquant --quick --backend cuda --out $BASE_GEN > $E/quick-base-$i.log 2>&1; echo "base $i rc $?" >> $log
done
for f in $E/quick-*.log; do echo "== $f"; grep -E "Tbq4" $f | head -2; done >> $log
echo "done $(date +%T)" >> $log
