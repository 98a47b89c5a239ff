#!/bin/bash
# The tensor-core decode step at the six shapes with PyTorch SDPA in the same call (the
# `decode-tc` part of scripts/gpu-evidence.sh, with this commit's binary), and the CUDA
# compiler's register report of the two tile kernels, this commit's and its parent's.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
gunzip -f .devbin/new/onekernel.gz; chmod +x .devbin/new/onekernel; N=.devbin/new/onekernel
O=/tmp/dtc; mkdir -p $O; trap 'tar czf $OUT/dtc.tgz -C /tmp dtc' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
for k in attn_decode_chunk_mma attn_prefill_mma; do
  for g in generated .devbin/base/generated; do
    echo "== $g/cuda/$k.cu"; nvcc -cubin -o /tmp/x.cubin -arch=sm_90 -Xptxas -v --fmad=false -std=c++17 $g/cuda/$k.cu 2>&1 | grep -E "Compiling|registers"
  done
done > $O/ptxas.log; grep -c registers $O/ptxas.log
timeout 200 $N bench --backend cuda,vulkan --tensor-cores 2,det --tensor-cores-only --runs 20 --evidence $O > $O/bench.md 2> $O/bench.log; echo bench rc $?; grep "step" $O/bench.log
date +%T
timeout 200 python3 cli/anchors/sdpa.py $O/bench-sdpa.json > $O/bench-sdpa.log 2>&1; echo sdpa rc $?; tail -n 12 $O/bench-sdpa.log
date +%T
