#!/usr/bin/env bash
# One device call: what limits the decode step where issue 7's targets are missed.
# ptxas's resource report and the SASS of the generated kernels; Nsight Compute (clocks
# not locked, so durations are at the clocks the benchmarks run at) on one tensor-core
# chunk kernel of `onekernel bench --tensor-cores 2` at 16 × 32768 and 1 × 32768, on the
# exact chunk and combine kernels of the fast and the deterministic mode at 1 × 4096
# (the deterministic overhead), and, where FlashInfer's source distribution is carried in
# .fi/, on one FlashInfer tensor-core call (scripts/flashinfer_one_call.py). Run on the
# GPU machine from the repository root with the stripped `onekernel` in .devbin/;
# writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
echo "== ptxas $(date +%T)" >> $log
for k in attn_decode_chunk_mma attn_decode_combine attn_decode_chunk; do
  echo "-- $k"; nvcc -arch=sm_90 -cubin -o /tmp/$k.cubin --resource-usage -I templates/cuda generated/cuda/$k.cu 2>&1 | grep -E "Function properties|registers|spill|smem|error" | sed 's/^ptxas info *: //'
  cuobjdump -sass /tmp/$k.cubin > $E/sass-$k-$gpu.txt 2>&1
done > $E/ptxas-tensor-cores-$gpu.log 2>&1
SECTIONS="--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section SchedulerStats --section WarpStateStats"
for shape in 16x32768 1x32768; do
  echo "== ncu onekernel $shape $(date +%T)" >> $log
  timeout 120 ncu --clock-control none --kernel-name regex:attn_decode_chunk_mma --launch-skip 5 --launch-count 1 $SECTIONS \
    .devbin/onekernel bench --backend cuda --tensor-cores 2 --shape $shape > $E/ncu-tensor-cores-$shape-$gpu.log 2>&1; echo "rc $?" >> $log
done
# The exact kernels at 1 × 4096, fast and deterministic: the third launch of each entry
# (after the bench's warm-up), one entry per Nsight Compute run.
for entry in attn_decode_chunk__paged_true__deterministic_false__async_k_true__long_pairs_false \
             attn_decode_chunk__paged_true__deterministic_true__async_k_true__long_pairs_false \
             attn_decode_combine__deterministic_false__early_loads_true attn_decode_combine__deterministic_true__early_loads_true; do
  echo "== ncu $entry 1x4096 $(date +%T)" >> $log
  timeout 90 ncu --clock-control none --kernel-name $entry --launch-skip 2 --launch-count 1 $SECTIONS \
    .devbin/onekernel bench --backend cuda --shape 1x4096 > $E/ncu-$entry-1x4096-$gpu.log 2>&1; echo "rc $?" >> $log
done
[ -d .fi ] || { echo "no .fi: FlashInfer not profiled" >> $log; finish; }
echo "== flashinfer $(date +%T)" >> $log
source scripts/flashinfer-env.sh >> $log 2>&1
for shape in 16x32768 1x32768; do
  echo "== ncu flashinfer $shape $(date +%T)" >> $log
  timeout $(( $(left) - 20 )) ncu --clock-control none --profile-from-start off $SECTIONS \
    python3 scripts/flashinfer_one_call.py $shape > $E/ncu-flashinfer-tensor-cores-$shape-$gpu.log 2>&1; echo "rc $?" >> $log
done
echo "done $(date +%T)" >> $log
