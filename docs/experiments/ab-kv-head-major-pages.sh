#!/usr/bin/env bash
# A/B of one device call (twenty-sixth session): the decode chunk kernel reading a
# head-major page layout (.devbin/new/onekernel with generated/: cell = (page·Hkv + kvh)·P
# + slot, i.e. FlashInfer's HND, a page's rows of one KV head contiguous) against the
# base (.devbin/onekernel with .devbin/gen-head, ggml's token-major pages: cell =
# (page·P + slot)·Hkv + kvh). A timing probe: the benchmark fills K/V with the same
# random bytes either way and does not check results. ROUNDS alternating rounds at
# SHAPES on both backends (docs/experiments/kv-head-major-pages.patch). Carry .devbin, .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-570}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
S=$(for s in ${SHAPES:-1x32768 16x32768 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^(cuda|vulkan) B' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-2}); do
  run hnd-$r 150 .devbin/new/onekernel bench --backend cuda,vulkan
  run base-$r 150 .devbin/onekernel bench --backend cuda,vulkan --out .devbin/gen-head
done
echo "done $(date +%T)" >> $log
