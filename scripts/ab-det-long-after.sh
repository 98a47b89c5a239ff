#!/usr/bin/env bash
# A/B of one device call: the runtime's deterministic long-chunk threshold
# (`DETERMINISTIC_LONG_AFTER`, 2048 since the twenty-second session) against a
# `--det-long-after` value (LONG_AFTER, default 4096, the threshold before it) at the
# shapes it moves (SHAPES, default 1x4096 16x4096 64x4096), both backends, ROUNDS
# alternating rounds, one binary (.devbin/onekernel) and the working tree's generated/.
# Used in the twenty-second session (bench-ab-det-long-after-h200.log), when the runtime's
# threshold was 4096 and LONG_AFTER 2048: the same pair of thresholds. Carry
# .devbin/onekernel and .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-400}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
S=$(for s in ${SHAPES:-1x4096 16x4096 64x4096}; do printf -- "--shape %s " $s; done)
for round in $(seq 1 ${ROUNDS:-2}); do
  for la in default ${LONG_AFTER:-4096}; do
    [ $(left) -lt 70 ] && break 2
    extra=""; [ $la = default ] || extra="--det-long-after $la"
    echo "== round $round long_after $la $(date +%T)" >> $log
    timeout 120 .devbin/onekernel bench --backend cuda,vulkan $S $extra --evidence $E/r$round-$la > $E/r$round-$la.log 2>&1
    echo "rc $?" >> $log
    grep -E '^(cuda|vulkan): copy|^\| [0-9]' $E/r$round-$la.log >> $log
  done
done
echo "done $(date +%T)" >> $log
