#!/bin/bash
# Per-row softmax state in two values (this commit, "new") against its parent ("base": its
# binary and generated/): compiler reports, validate, the tensor-core decode step
# alternated twice. Results in one tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
for d in base new; do gunzip -f .devbin/$d/onekernel.gz; chmod +x .devbin/$d/onekernel; done
N=.devbin/new/onekernel; B=".devbin/base/onekernel"; BG="--out .devbin/base/generated"
O=/tmp/rowstate; mkdir -p $O; trap 'tar czf $OUT/rowstate.tgz -C /tmp rowstate' EXIT
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 60 $N vk-stats --kernel attn_decode_chunk_mma --kernel attn_prefill_mma > $O/vk-stats-new.log 2>&1
timeout 60 $B vk-stats --kernel attn_prefill_mma $BG > $O/vk-stats-base.log 2>&1
grep -h "Register" $O/vk-stats-*.log | sed 's/Binary.*Shared/… Shared/'
timeout 170 $N validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_prefill_mma --evidence $O > $O/validate.log 2>&1; echo validate rc $?; grep -c " ok " $O/validate.log; grep -v " ok " $O/validate.log | tail -5
date +%T
S="--backend cuda,vulkan --tensor-cores 1,2 --tensor-cores-only --shape 1x32768 --shape 16x4096 --shape 64x4096 --runs 20"
for r in 1 2; do
  timeout 80 $N bench $S --evidence $O/new-$r > $O/new-$r.md 2> $O/new-$r.log; grep "step" $O/new-$r.log | sed "s/^/new  /"
  timeout 80 $B bench $S $BG > $O/base-$r.md 2> $O/base-$r.log; grep "step" $O/base-$r.log | sed "s/^/base /"
done
date +%T
