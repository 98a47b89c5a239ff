#!/usr/bin/env bash
# A/B: deterministic workgroups of two pairs of 128-token chunks, one pair after the other
# (the second pair's first K tile copied during the first pair's V pass), against one pair.
# The working tree's generated directory is the candidate; .devbin/gen-head is the
# committed generated directory before it (`git archive HEAD generated`), run with
# --det-chunks 2 (its workgroups hold at most one pair). .devbin/onekernel is the
# candidate's binary, .devbin/t/attention_invariance its test. Run through the device
# tool with carry [.devbin, .gl]; the log and JSON come back in $OUT/r.tgz.
set -uo pipefail
source scripts/device-env.sh
mkdir -p $OUT/r; log=$OUT/r/ab.log
finish() { cd $OUT && tar czf r.tgz r && rm -rf r; exit 0; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> $log
for g in generated .devbin/gen-head; do echo "== ptxas $g" >> $log
nvcc -arch=sm_90 -cubin -o /tmp/c.cubin --resource-usage $g/cuda/attn_decode_chunk.cu 2>&1 | grep -E "Function properties|registers|spill|smem|error" | sed 's/^ptxas info *: //' | paste - - - | sed 's/Function properties for //' | grep -E 'async_k_true|error' >> $log; done
echo "== validate $(date +%T)" >> $log
timeout 150 .devbin/onekernel validate --backend all --kernel attn_decode_chunk --kernel attn_decode_combine --evidence $OUT/r > $OUT/r/validate.log 2>&1; echo "validate rc $?" >> $log
grep -c " ok " $OUT/r/validate.log >> $log; grep -v " ok " $OUT/r/validate.log | grep -v SKIPPED | tail -4 >> $log
ALL="--shape 1x4096 --shape 1x32768 --shape 16x4096 --shape 64x4096 --shape 16x32768 --shape 128x8192"
S="--shape 1x32768 --shape 16x4096 --shape 64x4096 --shape 128x8192"
run() { name=$1; t=$2; shift 2; [ $(left) -lt $((t + 5)) ] && return; echo "== $name: $* $(date +%T)" >> $log; mkdir -p $OUT/r/$name; timeout $t .devbin/onekernel bench "$@" --evidence $OUT/r/$name 2>&1 | grep -E '^\| [0-9]' >> $log; }
run new 150 --backend cuda,vulkan $ALL
run head2 70 --backend cuda --out .devbin/gen-head --det-chunks 2 $S
run new2 70 --backend cuda --det-chunks 2 $S
run new4 70 --backend cuda --det-chunks 4 $S
run vk4 80 --backend vulkan --det-chunks 4 $S
echo "== attention_invariance $(date +%T), $(left) s left" >> $log
timeout $(( $(left) - 10 )) .devbin/t/attention_invariance --test-threads 2 > $OUT/r/attention_invariance.log 2>&1; echo "attention_invariance rc $?" >> $log
grep -E "^test |test result" $OUT/r/attention_invariance.log >> $log
echo "done $(date +%T)" >> $log
finish
