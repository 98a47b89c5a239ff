#!/bin/bash
# Prefill (fast and exact modes) with the per-row state in two values ("new") against its
# parent ("base"), CUDA and NVIDIA Vulkan in one process, alternated. One tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
for d in base new; do gunzip -f .devbin/$d/onekernel.gz; chmod +x .devbin/$d/onekernel; done
N=.devbin/new/onekernel; B=".devbin/base/onekernel"; BG="--out .devbin/base/generated"
O=/tmp/rowprefill; mkdir -p $O; trap 'tar czf $OUT/rowprefill.tgz -C /tmp rowprefill' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 170 $N bench-prefill --backend cuda,vulkan --runs 5 --evidence $O/new > $O/new.md 2> $O/new.log; echo new rc $?; grep fast $O/new.md
date +%T
timeout 170 $B bench-prefill --backend cuda,vulkan --runs 5 $BG > $O/base.md 2> $O/base.log; echo base rc $?; grep fast $O/base.md
date +%T
