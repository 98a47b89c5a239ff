#!/usr/bin/env bash
# A/B/C of one device call (twenty-sixth session): candidate A (.devbin/new/onekernel with
# generated/: K staged with four quads per block-table cell) and candidate B
# (.devbin/new3/onekernel with .devbin/new3/gen: A, and V staged through the free K
# buffers) against the base (.devbin/onekernel with .devbin/gen-head): ptxas of all
# three, validate of both candidates' decode kernels on CUDA (every variant, bitwise
# against the interpreter), then ROUNDS alternating benchmark rounds at SHAPES on both
# backends. Candidates: docs/experiments/k-staging-four-quads-per-cell.patch (A) and
# v-staged-through-k-buffers.patch (B, which contains A). Carry .devbin, .gl; writes
# $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-570}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
for g in .devbin/gen-head generated .devbin/new3/gen; do echo "== ptxas $g" >> $log
nvcc -arch=sm_90 -cubin -o /tmp/c.cubin --resource-usage $g/cuda/attn_decode_chunk.cu 2>&1 | grep -E "Function properties|registers|spill|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'async_k_true|error' | sed 's/attn_decode_chunk__//' >> $log; done
for c in "new generated" "new3 .devbin/new3/gen"; do set -- $c
  echo "== validate $1 $(date +%T)" >> $log
  timeout 100 .devbin/$1/onekernel validate --backend cuda --kernel attn_decode_chunk --kernel attn_decode_combine --out $2 > $E/validate-$1.log 2>&1; echo "validate $1 rc $? ok $(grep -c ' ok ' $E/validate-$1.log)" >> $log
  grep -v " ok " $E/validate-$1.log | grep -v SKIPPED | tail -3 >> $log
done
S=$(for s in ${SHAPES:-1x32768 16x4096 16x32768 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^\| [0-9]' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-2}); do
  run new-$r 110 .devbin/new/onekernel bench --backend cuda,vulkan
  run new3-$r 110 .devbin/new3/onekernel bench --backend cuda,vulkan --out .devbin/new3/gen
  run base-$r 110 .devbin/onekernel bench --backend cuda,vulkan --out .devbin/gen-head
done
echo "done $(date +%T)" >> $log
