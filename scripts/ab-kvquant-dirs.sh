#!/usr/bin/env bash
# One device call: `bench-kvquant --quick` (TBQ4, QJL, Polar at L = 65536, CUDA and
# Vulkan) of this tree's generated/ and of each generated directory in DIRS (e.g.
# hand-edited CUDA sources, an experiment before it is written in the DSL), taking turns
# ROUNDS (default 2) times, with nvcc's register report of each directory's score
# kernels; within BUDGET_S (default 400) seconds. Run on the GPU machine from the
# repository root with .devbin/onekernel and .gl carried; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-400}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
kvquant_ptxas generated $DIRS > $E/ptxas-kvquant-$gpu.log 2>&1
for i in $(seq ${ROUNDS:-2}); do
  for g in generated $DIRS; do
    [ $(left) -lt 50 ] && break 2
    n=$(basename $g)
    timeout 60 .devbin/onekernel bench-kvquant --quick --backend cuda,vulkan --out $g > $E/quick-$n-$i.log 2>&1; echo "$n $i rc $?" >> $log
  done
done
for f in $E/quick-*.log; do echo "== $(basename $f)"; grep -E "^\| (cuda|vulkan) " $f | sort -u; done >> $log
echo "done $(date +%T)" >> $log
