#!/usr/bin/env bash
# The benchmarks' L2 flush written (a 128 MiB memset before each timed unit, the method of
# every run until the twenty-fifth session) against read (a kernel that reads the same
# 128 MiB, so the L2 holds clean lines instead of dirty ones the timed kernel must write
# back when it evicts them): `onekernel bench` at SHAPES and `bench-kvquant --quick`, both
# backends, modes alternating ROUNDS times. ONEKERNEL_L2_FLUSH selects the mode: it is
# read by the experiment docs/experiments/l2-read-flush-nvrtc-6b7ba6e.patch (CUDA only, an
# NVRTC-compiled reader; the runtime since has the flush of read_words and no switch). Carry
# .devbin/onekernel and .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
S=$(for s in ${SHAPES:-1x4096 1x32768 16x4096 16x32768}; do printf -- "--shape %s " $s; done)
for r in $(seq 1 ${ROUNDS:-2}); do
  for mode in write read; do
    [ $(left) -lt 100 ] && break
    echo "== bench flush=$mode round $r $(date +%T)" >> $log
    ONEKERNEL_L2_FLUSH=$mode timeout 120 .devbin/onekernel bench --backend cuda,vulkan $S > $E/bench-$mode-$r.log 2>&1; echo "rc $?" >> $log
    grep -E '^\| [0-9]|copy' $E/bench-$mode-$r.log >> $log
  done
done
for mode in write read; do
  [ $(left) -lt 70 ] && break
  echo "== bench-kvquant flush=$mode $(date +%T)" >> $log
  ONEKERNEL_L2_FLUSH=$mode timeout 65 .devbin/onekernel bench-kvquant --quick --backend cuda,vulkan > $E/kvquant-$mode.log 2>&1; echo "rc $?" >> $log
  grep -E '^\| |copy|floor' $E/kvquant-$mode.log >> $log
done
echo "done $(date +%T)" >> $log
