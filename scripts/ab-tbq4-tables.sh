#!/usr/bin/env bash
# One device call for `tbq4_score` (TBQ4 scores by position tables; an experiment not kept:
# apply docs/experiments/tbq4-position-tables.patch, `onekernel gen`, build) against the kernel it
# replaces (`turbo_score`'s TBQ4 layout, in BASE_GEN with BASE_BIN, default
# .devbin/gen-base and .devbin/onekernel-base: the previous commit's generated files and
# binary): ptxas of both, validate of both kernels on CUDA and Vulkan, bench-kvquant
# --quick with each (same call, alternating), the full KV-quant benchmark with evidence,
# the fixtures, Nsight Compute of tbq4_score and the KV-quant test suites, within
# BUDGET_S (default 540) seconds. Run on the GPU machine from the repository root with
# .devbin (binaries), .gl and .fx carried; writes $OUT/ev.tgz.
set -uo pipefail
source scripts/device-env.sh
ev_start
BASE_GEN=${BASE_GEN:-.devbin/gen-base}; BASE_BIN=${BASE_BIN:-.devbin/onekernel-base}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
echo "== ptxas $(date +%T)" >> $log
for f in generated/cuda/tbq4_score.cu $BASE_GEN/cuda/turbo_score.cu; do
  echo "-- $f"; nvcc -arch=sm_90 -cubin -o /tmp/k.cubin --resource-usage $f 2>&1 | grep -E "Function properties|registers|spill|smem" | sed 's/^ptxas info *: //'
done > $E/ptxas-resource-usage-h200.log 2>&1
echo "== validate $(date +%T)" >> $log
timeout 120 .devbin/onekernel validate --kernel tbq4_score --kernel turbo_score --backend all --evidence $E > $E/validate-h200.log 2>&1; echo "validate rc $?" >> $log
grep -E "tbq4_score" $E/validate-h200.log | head -20 >> $log
echo "== quick A/B $(date +%T)" >> $log
for i in 1 2; do
  timeout 60 .devbin/onekernel bench-kvquant --quick --backend cuda,vulkan > $E/quick-new-$i.log 2>&1; echo "new $i rc $?" >> $log
  timeout 60 $BASE_BIN bench-kvquant --quick --backend cuda,vulkan --out $BASE_GEN > $E/quick-base-$i.log 2>&1; echo "base $i rc $?" >> $log
done
grep -h -i "tbq4" $E/quick-*.log >> $log
echo "== full bench $(date +%T), $(left) s left" >> $log
[ $(left) -gt 200 ] && { timeout 150 .devbin/onekernel bench-kvquant --backend cuda,vulkan --evidence $E > $E/bench-kvquant-h200.log 2>&1; echo "bench rc $?" >> $log; }
echo "== fixtures $(date +%T)" >> $log
mkdir -p /tmp/fx; cp .fx/*/*.json /tmp/fx/
timeout 60 .devbin/onekernel fixture /tmp/fx/*.json --backend cuda,vulkan > $E/fixtures-h200.log 2>&1; echo "fixtures rc $?" >> $log
echo "== test suites $(date +%T), $(left) s left" >> $log
mkdir -p /work/main/tests /work/shared/fixtures; cp -r .fx/* /work/shared/fixtures/
[ -e /work/main/generated ] || ln -sfn "$PWD/generated" /work/main/generated
for t in tbq4_tables kvquant_formats eliza_fixtures; do
  echo "== $t"; timeout 90 .devbin/t/$t --test-threads 2 2>&1 | grep -E "^test |test result|panicked|SKIP"
done > $E/test-suites-kvquant-h200.log 2>&1
echo "== ncu $(date +%T), $(left) s left" >> $log
if [ $(left) -gt 90 ] && command -v ncu >/dev/null; then
  timeout $(( $(left) - 20 )) ncu --kernel-name regex:tbq4_score --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis_Tables -o /tmp/tbq4 \
    .devbin/onekernel bench-kvquant --quick --runs 5 --backend cuda > /dev/null 2>&1; echo "ncu rc $?" >> $log
  ncu -i /tmp/tbq4.ncu-rep --page details > $E/ncu-tbq4_score-h200.log 2>&1
fi
echo "done $(date +%T)" >> $log
