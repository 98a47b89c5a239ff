#!/bin/bash
# Evidence of the change (one tarball): validate on CUDA and NVIDIA Vulkan, decode tensor-core step, prefill.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
P=.devbin/p4; O=/tmp/vkcopy; mkdir -p $O; gunzip -f $P/onekernel.gz; chmod +x $P/onekernel
trap 'tar czf $OUT/vkcopy.tgz -C /tmp vkcopy' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 150 $P/onekernel validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_prefill_mma --kernel attn_decode_chunk --evidence $O > $O/validate.log 2>&1; echo validate rc $?; grep -c " ok " $O/validate.log
date +%T
timeout 100 $P/onekernel bench --backend cuda,vulkan --tensor-cores 1,2 --tensor-cores-only --shape 1x32768 --shape 16x4096 --shape 64x4096 --runs 20 --evidence $O > $O/bench-decode-tc.md 2> $O/bench-decode-tc.log; echo bench rc $?
date +%T
timeout 150 $P/onekernel bench-prefill --backend cuda,vulkan --runs 10 --evidence $O > $O/bench-prefill.md 2> $O/bench-prefill.log; echo prefill rc $?; grep fast $O/bench-prefill.md
date +%T
