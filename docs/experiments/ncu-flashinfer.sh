#!/usr/bin/env bash
# One device call: Nsight Compute over FlashInfer 0.2.14's paged decode
# (docs/experiments/flashinfer_kernels.py; FlashInfer from .fi/, scripts/flashinfer-env.sh):
# per kernel its NVTX range (shape and path), name, grid, block, registers, shared memory,
# duration, DRAM bytes read and achieved occupancy; caches flushed before each kernel (ncu's
# default). Carry .fi (and .gl, .devbin for device-env.sh's loader); writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-400}
source scripts/device-env.sh
ev_start
source scripts/flashinfer-env.sh >> $log 2>&1
python3 -c "import flashinfer; print('flashinfer', flashinfer.__version__)" >> $log 2>&1
m=gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__shared_mem_per_block_static,launch__shared_mem_per_block_dynamic,dram__bytes_read.sum,sm__warps_active.avg.pct_of_peak_sustained_active
timeout $(( $(left) - 20 )) ncu --nvtx --metrics $m --csv --page raw python3 docs/experiments/flashinfer_kernels.py > $E/ncu-flashinfer-raw.csv 2> $E/ncu-flashinfer.err; echo "ncu rc $?" >> $log
tail -5 $E/ncu-flashinfer.err >> $log
echo "done $(date +%T)" >> $log
