#!/bin/bash
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ONEKERNEL_ROOT=$PWD
P=.devbin/p5; O=/tmp/vkcopy-fold; mkdir -p $O; gunzip -f $P/onekernel.gz; chmod +x $P/onekernel
trap 'tar czf $OUT/fold.tgz -C /tmp vkcopy-fold' EXIT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $O/device.txt
timeout 150 $P/onekernel validate --backend vulkan --kernel attn_decode_chunk_mma --kernel attn_prefill_mma --evidence $O > $O/validate.log 2>&1; echo validate rc $?; grep -c " ok " $O/validate.log; grep -vE " ok |SKIPPED" $O/validate.log | tail -3
