#!/usr/bin/env bash
# A/B of one device call: the decode step's combine as a programmatic dependent launch
# (CUDA, sm_90; the runtime's default since the twenty-sixth session) against ordinary
# launches (ONEKERNEL_CUDA_PDL=0), the same binary (.devbin/onekernel) and generated/
# both sides. First `decode_step` (.devbin/t) with it: a step's output must be bitwise a
# run's; then ROUNDS alternating CUDA benchmark rounds at SHAPES.
# The committed log, generated/evidence/bench-ab-programmatic-launch-h200.log, comes from
# this script's experimental form before it landed: the launch opt-in
# (ONEKERNEL_CUDA_PDL=1), the wait added by hand to the combine only, the base reading
# HEAD a355a4f's generated directory, and a second decode_step run with the combine's
# wait removed (it passed too). Carry .devbin, .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-570}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
echo "== decode_step, programmatic launch $(date +%T)" >> $log
timeout 120 .devbin/t/decode_step --test-threads 1 --nocapture > $E/decode_step.log 2>&1; echo "decode_step rc $?" >> $log
grep -E "^test |test result|cuda" $E/decode_step.log >> $log
S=$(for s in ${SHAPES:-1x4096 1x32768 16x4096 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^cuda B' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-2}); do
  run pdl-$r 100 .devbin/onekernel bench --backend cuda
  ONEKERNEL_CUDA_PDL=0 run base-$r 100 .devbin/onekernel bench --backend cuda
done
echo "done $(date +%T)" >> $log
