#!/usr/bin/env bash
# A/B of one device call for a change to the decode step on CUDA: the candidate's kernels
# (generated/ of the working tree) against the base's (.devbin/gen-head, `git archive
# HEAD generated` of the commit before), one binary (.devbin/onekernel: `bench --out DIR`
# compiles the kernels of DIR with NVRTC). First `decode_step` and `cuda_backend`
# (.devbin/t) and validate of the attention kernels on CUDA with the candidate; the
# negative control: `decode_step` again with the combine's wait deleted from its
# generated file, which must fail; then ROUNDS alternating CUDA benchmark rounds at
# SHAPES. Twenty-seventh session: every entry triggering the dependent launch right
# after its wait (`early-dependent-trigger.patch`, bench-ab-early-trigger-h200.log), the
# chunk kernel's `launch_dependents()` after its V pass (`late-dependent-trigger.patch`,
# bench-ab-late-trigger-h200.log), the combine's first m and l requested together
# (bench-ab-combine-first-chunk-h200.log). Carry .devbin, .gl; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-570}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
# The test binaries read generated/ from their build path (/work/main).
if [ "$PWD" != /work/main ]; then mkdir -p /work/main/tests; ln -sfn "$PWD/generated" /work/main/generated; fi
echo "== decode_step, cuda_backend $(date +%T)" >> $log
timeout 120 .devbin/t/decode_step --test-threads 1 > $E/decode_step.log 2>&1; echo "decode_step rc $?" >> $log
timeout 120 .devbin/t/cuda_backend --test-threads 1 > $E/cuda_backend.log 2>&1; echo "cuda_backend rc $?" >> $log
grep -hE "test result" $E/decode_step.log $E/cuda_backend.log >> $log
echo "== negative control: decode_step with the combine's wait deleted $(date +%T)" >> $log
c=generated/cuda/attn_decode_combine.cu; cp $c /tmp/combine.cu
sed -i 's/^    ok_grid_dependency_wait();$//' $c; echo "waits left in the combine: $(grep -c 'ok_grid_dependency_wait();' $c)" >> $log
timeout 120 .devbin/t/decode_step --test-threads 1 > $E/decode_step-no-wait.log 2>&1; echo "decode_step without the wait rc $? (must fail)" >> $log
grep -E "panicked|differs|test result" $E/decode_step-no-wait.log | head -4 >> $log
cp /tmp/combine.cu $c
echo "== validate $(date +%T)" >> $log
timeout 120 .devbin/onekernel validate --backend cuda --kernel attn_decode_chunk --kernel attn_decode_combine > $E/validate.log 2>&1; echo "validate rc $? ok $(grep -c ' ok ' $E/validate.log)" >> $log
grep -v " ok " $E/validate.log | tail -4 >> $log
S=$(for s in ${SHAPES:-1x4096 1x32768 16x4096 128x8192}; do printf -- "--shape %s " $s; done)
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t / 2 + 5)) ] && return; echo "== $name $(date +%T)" >> $log; timeout $t "$@" $S > $E/$name.log 2>&1; grep -E '^cuda B' $E/$name.log >> $log; }
for r in $(seq 1 ${ROUNDS:-2}); do
  run trigger-$r 100 .devbin/onekernel bench --backend cuda
  run base-$r 100 .devbin/onekernel bench --backend cuda --out .devbin/gen-head
done
echo "done $(date +%T)" >> $log
