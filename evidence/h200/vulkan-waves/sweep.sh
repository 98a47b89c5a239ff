#!/bin/bash
# Tensor-core decode step against the chunk length (so the workgroup count and its waves),
# CUDA and NVIDIA Vulkan in one process, one buffer and CUDA's two; results in one tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
B=.devbin/onekernel; gunzip -f $B.gz; chmod +x $B; O=/tmp/waves; mkdir -p $O
trap 'tar czf $OUT/waves.tgz -C /tmp waves' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt
timeout 60 $B vk-stats --kernel attn_decode_chunk_mma > $O/vk-stats.log 2>&1
sweep() {
  local shape=$1; shift
  for c in "$@"; do
    echo "== $shape chunk $c" | tee -a $O/sweep.log
    timeout 90 $B bench --backend cuda,vulkan --tensor-cores 1,2 --tensor-cores-only --shape $shape --tc-chunk $c --runs 20 > $O/bench-$shape-$c.md 2> $O/bench-$shape-$c.log
    grep "step" $O/bench-$shape-$c.log | tee -a $O/sweep.log || tail -3 $O/bench-$shape-$c.log
  done
}
sweep 1x32768 1024 768 704 640 512
sweep 16x4096 2048 1408 1024
sweep 64x4096 4096 2048 1408
sweep 16x32768 16384 11008 8192
sweep 128x8192 8192 4096 2752
date +%T
