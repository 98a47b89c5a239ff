#!/usr/bin/env bash
# A/B of one device call: a candidate tree's decode-attention kernels (binary
# .devbin/new/onekernel, its generated/ in the working tree) against a base (binary
# .devbin/onekernel with its generated directory .devbin/gen-head, e.g. `git archive HEAD
# generated`): ptxas of both, validate and attention_invariance (.devbin/t) of the
# candidate, then the benchmark at SHAPES (default: the batched and long shapes), both
# backends, candidate and base in turn, and CUDA alone where CUDA_ALONE=1. Used for the
# `long_pairs` variant (twentieth session, generated/evidence/bench-ab-long-pairs-h200.log)
# and the `packed` one (twenty-first, bench-ab-packed-h200.log). ROUNDS (default 1)
# alternating candidate / base rounds on BACKENDS (default cuda,vulkan). Carry .devbin/new,
# .devbin/t, .devbin/onekernel, .devbin/gen-head and .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
for g in generated .devbin/gen-head; do echo "== ptxas $g" >> $log
nvcc -arch=sm_90 -cubin -o /tmp/c.cubin --resource-usage $g/cuda/attn_decode_chunk.cu 2>&1 | grep -E "Function properties|registers|spill|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'async_k_true|error' | sed 's/attn_decode_chunk__//' >> $log; done
echo "== validate $(date +%T)" >> $log
timeout 150 .devbin/new/onekernel validate --backend all --kernel attn_decode_chunk --kernel attn_decode_combine --evidence $E > $E/validate.log 2>&1; echo "validate rc $? ok $(grep -c ' ok ' $E/validate.log)" >> $log
grep -v " ok " $E/validate.log | grep -v SKIPPED | tail -4 >> $log
echo "== attention_invariance $(date +%T)" >> $log
timeout 120 .devbin/t/attention_invariance --test-threads 2 > $E/attention_invariance.log 2>&1; echo "attention_invariance rc $?" >> $log
grep -E "^test |test result" $E/attention_invariance.log >> $log
S=$(for s in ${SHAPES:-1x32768 16x4096 64x4096 16x32768 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^\| [0-9]' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-1}); do
  run new-cv-$r 160 .devbin/new/onekernel bench --backend ${BACKENDS:-cuda,vulkan}
  run base-cv-$r 160 .devbin/onekernel bench --backend ${BACKENDS:-cuda,vulkan} --out .devbin/gen-head
done
if [ "${CUDA_ALONE:-0}" = 1 ]; then
  run new-c 80 .devbin/new/onekernel bench --backend cuda
  run base-c 80 .devbin/onekernel bench --backend cuda --out .devbin/gen-head
fi
echo "done $(date +%T)" >> $log
