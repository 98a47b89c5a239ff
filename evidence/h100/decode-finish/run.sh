#!/bin/bash
# finish on an H100: A/B against main (own binary and generated/), SDPA in the same call.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
B=.devbin/d1; M=.devbin/mainbin; O=$OUT/q; mkdir -p $O; gunzip -f $B/*.gz $B/t/*.gz $M/*.gz; chmod +x $B/onekernel $B/t/* $M/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
S="--shape 1x32768 --shape 16x4096 --shape 64x4096"
i=0; for x in new main new main; do i=$((i+1)); K=$B/onekernel; D=generated; [ $x = main ] && K=$M/onekernel && D=.devbin/maingen/generated; timeout 100 $K bench --backend cuda --tensor-cores 2 $S --runs 20 --out $D --evidence $O/ev-$x-$i > $O/bench-$x-$i.md 2> $O/bench-$x-$i.log; echo $x rc $?; grep tensor_cores $O/bench-$x-$i.log | cut -c1-120; done
timeout 60 python3 cli/anchors/sdpa.py $O/sdpa.json > $O/sdpa.log 2>&1; echo sdpa rc $?
date +%T
date +%T
cd $OUT && tar czf q.tgz q && rm -rf q
