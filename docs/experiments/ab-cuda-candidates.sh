#!/usr/bin/env bash
# One device call comparing hand-picked generated CUDA sources of `attn_decode_chunk`
# (DSL source variants generated here, measurement only): ptxas of each, then the CUDA
# benchmark of each at SHAPES against the base (.devbin/onekernel with .devbin/gen-head).
# Candidates: .devbin/cand/vN.cu (v0 = the base's own source); each runs with the
# working tree's generated/ (its manifest) and its .cu in place of the chunk kernel's,
# through .devbin/new/onekernel. Carry .devbin/new, .devbin/cand, .devbin/onekernel,
# .devbin/gen-head and .gl; writes $OUT/ev.tgz. Used in the twenty-first session for the
# `packed` variant's register pressure (generated/evidence/bench-ab-packed-h200.log).
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
for f in .devbin/cand/*.cu; do
  ( nvcc -arch=sm_90 -cubin -o /tmp/$(basename $f).cubin --resource-usage $f 2>&1 | grep -E "Function properties|registers|spill|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'async_k_true|error' | sed 's/attn_decode_chunk__//' > $E/ptxas-$(basename $f).log ) &
done
wait
for f in .devbin/cand/*.cu; do echo "== ptxas $f" >> $log; cat $E/ptxas-$(basename $f).log >> $log; done
S=$(for s in ${SHAPES:-16x4096 64x4096 128x8192}; do printf -- "--shape %s " $s; done)
bench() { name=$1; shift; [ $(left) -lt 50 ] && return; echo "== $name $(date +%T)" >> $log; timeout 45 "$@" $S > $E/$name.log 2>&1; grep -E '^\| [0-9]' $E/$name.log >> $log; }
for f in ${ORDER:-$(ls .devbin/cand/*.cu)}; do
  n=$(basename $f .cu)
  if [ $n = v0 ]; then bench base .devbin/onekernel bench --backend cuda --out .devbin/gen-head; continue; fi
  rm -rf /tmp/g-$n; cp -r generated /tmp/g-$n; cp $f /tmp/g-$n/cuda/attn_decode_chunk.cu
  bench $n .devbin/new/onekernel bench --backend cuda --out /tmp/g-$n
done
echo "done $(date +%T)" >> $log
