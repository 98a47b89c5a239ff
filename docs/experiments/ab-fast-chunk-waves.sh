#!/usr/bin/env bash
# Wave quantization probe: the fast mode's chunk length chosen so that a launch's
# workgroups fill whole waves (132 SMs x 4), against the scheduler's choice; same binary,
# alternating rounds, paged/contiguous fast rows compared.
set -uo pipefail
BUDGET_S=${BUDGET_S:-540}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t .devbin/onekernel bench "$@" > $E/$name.log 2>&1; grep -E "^\| [0-9]|decode step|timed apart" $E/$name.log >> $log; }
for r in 1 2; do
  run cuda-16x32768-base-$r 60 --backend cuda --shape 16x32768
  run cuda-16x32768-497-$r 60 --backend cuda --shape 16x32768 --fast-chunk 497
  run cuda-128x8192-base-$r 80 --backend cuda --shape 128x8192
  run cuda-128x8192-482-$r 80 --backend cuda --shape 128x8192 --fast-chunk 482
  run vk-16x32768-base-$r 60 --backend vulkan --shape 16x32768
  run vk-16x32768-249-$r 60 --backend vulkan --shape 16x32768 --fast-chunk 249
done
echo "done $(date +%T)" >> $log
