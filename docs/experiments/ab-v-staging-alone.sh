#!/usr/bin/env bash
# A/B of one device call (twenty-sixth session): V staged through the free K buffers
# alone (.devbin/new/onekernel with generated/; docs/experiments/v-staged-alone.patch)
# against the base (.devbin/onekernel with .devbin/gen-head): ptxas of both, validate of
# the candidate's decode kernels on CUDA, then one round at every shape of ANCHORS.md on
# both backends. Carry .devbin, .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-580}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
for g in .devbin/gen-head generated; do echo "== ptxas $g" >> $log
nvcc -arch=sm_90 -cubin -o /tmp/c.cubin --resource-usage $g/cuda/attn_decode_chunk.cu 2>&1 | grep -E "Function properties|registers|spill|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'paged_true.*async_k_true|error' | sed 's/attn_decode_chunk__//' >> $log; done
echo "== validate $(date +%T)" >> $log
timeout 80 .devbin/new/onekernel validate --backend cuda --kernel attn_decode_chunk > $E/validate.log 2>&1; echo "validate rc $? ok $(grep -c ' ok ' $E/validate.log)" >> $log
grep -v " ok " $E/validate.log | grep -v SKIPPED | tail -3 >> $log
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" > $E/$name.log 2>&1; grep -E '^cuda B' $E/$name.log >> $log; }
run new 225 .devbin/new/onekernel bench --backend cuda,vulkan
run base 225 .devbin/onekernel bench --backend cuda,vulkan --out .devbin/gen-head
echo "done $(date +%T)" >> $log
