#!/usr/bin/env bash
# A/B/C of one device call (twenty-third session): two candidate trees' decode-attention
# kernels (.devbin/new/onekernel with generated/, .devbin/new3/onekernel with
# .devbin/new3/gen) against the base (.devbin/onekernel with .devbin/gen-head):
# validate of both candidates on NVIDIA Vulkan, then ROUNDS alternating benchmark rounds
# at SHAPES on both backends.
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
for c in "new generated" "new3 .devbin/new3/gen"; do set -- $c
  [ $(left) -lt 300 ] && break
  echo "== validate $1 $(date +%T)" >> $log
  timeout 100 .devbin/$1/onekernel validate --backend vulkan --kernel attn_decode_chunk --out $2 > $E/validate-$1.log 2>&1; echo "validate $1 rc $? ok $(grep -c ' ok ' $E/validate-$1.log)" >> $log
  grep -v " ok " $E/validate-$1.log | grep -v SKIPPED | tail -3 >> $log
done
S=$(for s in ${SHAPES:-1x4096 16x4096 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^\| [0-9]' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-2}); do
  run new2-$r 120 .devbin/new/onekernel bench --backend cuda,vulkan
  run new3-$r 120 .devbin/new3/onekernel bench --backend cuda,vulkan --out .devbin/new3/gen
  run base-$r 120 .devbin/onekernel bench --backend cuda,vulkan --out .devbin/gen-head
done
echo "done $(date +%T)" >> $log
