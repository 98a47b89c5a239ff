#!/usr/bin/env bash
# One device call of evidence for the decode-attention kernels: ptxas of the two
# attention kernels, validate (every kernel, both backends; stops here on a mismatch),
# fixtures, the decode-attention benchmark, two same-session comparison runs on CUDA
# (this commit's kernels with two deterministic chunks per workgroup, and another
# generated directory, BASE_GEN, default .devbin/gen-base, with BASE_ARGS, default
# `--det-chunks 2`), then the full determinism grid on CUDA and Vulkan side by side with
# the attention test suites, all within BUDGET_S (default 545) seconds so the device
# tool's 600 s limit never loses the files; COMPARE=0 skips the comparison runs. PART=checks
# stops before the grid and PART=grid runs only the grid and the suites (two calls, since
# the benchmark also times decode steps). Run
# on the GPU machine from the repository root with the stripped `onekernel` binary in
# .devbin/, test binaries in .devbin/t/, the Vulkan loader packages in .gl/ and the
# fixtures in .fx/ (scripts/gpu-validate.sh says how to make them); writes $OUT/ev.tgz.
set -uo pipefail
source scripts/device-env.sh
ev_start
mkdir -p /tmp/fx ../shared/fixtures; cp .fx/*/*.json /tmp/fx/; cp -r .fx/* ../shared/fixtures/
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
PART=${PART:-all}
if [ "$PART" != grid ]; then
echo "== compiler resource report (ptxas -v, sm_90) $(date +%T)" >> $log
for k in attn_decode_chunk attn_decode_combine; do
  echo "-- $k"; nvcc -arch=sm_90 -cubin -o /tmp/$k.cubin --resource-usage generated/cuda/$k.cu 2>&1 | grep -E "Function properties|registers|spill|smem" | sed 's/^ptxas info *: //'
done > $E/ptxas-resource-usage-h200.log 2>&1
echo "== validate $(date +%T)" >> $log
timeout 240 .devbin/onekernel validate --backend all --evidence $E > $E/validate-h200.log 2>&1; rc=$?; echo "validate rc $rc" >> $log
grep -c ' ok ' $E/validate-h200.log >> $log; grep -v ' ok ' $E/validate-h200.log | grep -v SKIPPED | tail -5 >> $log
[ $rc -ne 0 ] && finish
echo "== fixtures $(date +%T)" >> $log
timeout 60 .devbin/onekernel fixture /tmp/fx/*.json --backend cuda,vulkan --evidence $E > $E/fixtures-h200.log 2>&1; echo "fixtures rc $?" >> $log
echo "== bench $(date +%T)" >> $log
timeout 260 .devbin/onekernel bench --backend cuda,vulkan --evidence $E > $E/bench-h200.log 2>&1; echo "bench rc $?" >> $log
compare() {
  name=$1; gen=$2; shift 2; echo "== $name ($gen $*) $(date +%T)" >> $log; mkdir -p $E/$name
  timeout 45 .devbin/onekernel bench --backend cuda --out "$gen" --shape 1x32768 --shape 16x4096 --shape 128x8192 "$@" --evidence $E/$name > $E/$name/bench-$name-h200.log 2>&1; echo "$name rc $?" >> $log
}
if [ "${COMPARE:-1}" = 1 ]; then
  compare det2 generated --det-chunks 2
  compare base "${BASE_GEN:-.devbin/gen-base}" ${BASE_ARGS:---det-chunks 2}
fi
fi
[ "$PART" = checks ] && { echo "done $(date +%T)" >> $log; finish; }
L=$(left); echo "== grid + test suites $(date +%T), $L s left" >> $log
if [ $L -gt 60 ]; then
  timeout $L .devbin/onekernel attention-grid --grid full --backend cuda --evidence $E > $E/attention-grid-cuda-h200.log 2>&1 &
  p1=$!
  timeout $L .devbin/onekernel attention-grid --grid full --backend vulkan --evidence $E > $E/attention-grid-vulkan-h200.log 2>&1 &
  p2=$!
  ( for t in attention_invariance decode_step cuda_backend attention_fixtures backend_threads attention_reference; do echo "== $t"; timeout $(( $(left) - 5 )) .devbin/t/$t --test-threads 2 2>&1 | grep -E "^test |test result|panicked|SKIP"; done ) > $E/test-suites-h200.log 2>&1 &
  p3=$!
  wait $p1; echo "grid cuda rc $?" >> $log; wait $p2; echo "grid vulkan rc $?" >> $log; wait $p3
fi
echo "done $(date +%T)" >> $log
finish
