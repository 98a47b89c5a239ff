#!/usr/bin/env bash
# One device call for decode attention on tensor cores (`attn_decode_chunk_mma`, class
# fast): validate it on CUDA and NVIDIA Vulkan against the interpreter (tolerance), run
# the `attention_tensor_cores` suite (float64 reference, repeatability, negative
# control), then `onekernel bench --backend cuda --tensor-cores` over ANCHORS.md's
# shapes. Run on the GPU machine from the repository root with the stripped `onekernel`
# in .devbin/, the suite in .devbin/t/ and the Vulkan loader packages in .gl/
# (scripts/gpu-validate.sh says how to make them); writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
if [ "$PWD" != /work/main ]; then mkdir -p /work/main /work/shared; ln -sfn "$PWD/generated" /work/main/generated; fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > $E/clocks-tensor-cores-h200.csv &
echo "== validate $(date +%T)" >> $log
timeout 120 .devbin/onekernel validate --backend all --kernel attn_decode_chunk_mma --kernel attn_decode_combine --evidence $E > $E/validate-tensor-cores-h200.log 2>&1; echo "validate rc $?" >> $log
tail -4 $E/validate-tensor-cores-h200.log >> $log
echo "== suite $(date +%T)" >> $log
timeout 120 .devbin/t/attention_tensor_cores --nocapture --test-threads 1 > $E/test-tensor-cores-h200.log 2>&1; echo "suite rc $?" >> $log
grep -E "test result|panicked" $E/test-tensor-cores-h200.log >> $log
# SKIP_BENCH=1: validate and the suite only (a call that benchmarks through another script).
[ "${SKIP_BENCH:-0}" = 1 ] && { echo "done $(date +%T)" >> $log; finish; }
echo "== bench $(date +%T)" >> $log
timeout $(( $(left) - 10 )) .devbin/onekernel bench --backend cuda ${BENCH_ARGS:---tensor-cores 2} --evidence $E > $E/bench-tensor-cores-h200.log 2>&1; echo "bench rc $?" >> $log
echo "done $(date +%T)" >> $log
