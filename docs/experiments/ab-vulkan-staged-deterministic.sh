# Experiment of the twenty-second session (docs/PERFORMANCE.md): Vulkan, deterministic
# 1 x 4096, base binary against one built with vulkan-staged-deterministic.patch
# (ONEKERNEL_EXP_STAGE_DET=1 makes deterministic launches take the staged async_k
# variant where copies are synchronous). Ran from the repository root on the GPU
# machine with .devbin/onekernel, .devbin/cand/onekernel and .gl carried.
set -uo pipefail
BUDGET_S=300
source scripts/device-env.sh
ev_start
for round in 1 2; do
  for who in base cand; do
    echo "== round $round $who $(date +%T)" >> $log
    if [ $who = base ]; then timeout 60 .devbin/onekernel bench --backend vulkan --shape 1x4096 > $E/r$round-$who.log 2>&1
    else ONEKERNEL_EXP_STAGE_DET=1 timeout 60 .devbin/cand/onekernel bench --backend vulkan --shape 1x4096 > $E/r$round-$who.log 2>&1; fi
    echo "rc $?" >> $log; grep -E '^\| [0-9]|B +1 L' $E/r$round-$who.log >> $log
  done
done
