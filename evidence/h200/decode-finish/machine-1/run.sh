#!/bin/bash
# finish (one-chunk launches normalized in the chunk kernel): validate, suite, A/B against main (its own binary and generated/).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
B=.devbin/d1; M=.devbin/mainbin; O=$OUT/q; mkdir -p $O; gunzip -f $B/*.gz $B/t/*.gz $M/*.gz; chmod +x $B/onekernel $B/t/* $M/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 120 $B/onekernel validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --evidence $O > $O/validate.log 2>&1; echo validate rc $?; grep -c " ok " $O/validate.log; grep -vE " ok |SKIPPED" $O/validate.log | tail -3
timeout 150 $B/t/attention_tensor_cores --nocapture > $O/suite.log 2>&1; echo suite rc $?; grep -E "test result|panicked" -A1 $O/suite.log | cut -c1-300
date +%T
S="--shape 1x32768 --shape 16x4096 --shape 64x4096"
for x in new main new main; do K=$B/onekernel; D=generated; [ $x = main ] && K=$M/onekernel && D=.devbin/maingen/generated; timeout 150 $K bench --backend cuda --tensor-cores 2 $S --runs 20 --out $D --evidence $O/ev-$x > $O/bench-$x.md 2> $O/bench-$x.log; echo $x rc $?; grep tensor_cores $O/bench-$x.log | cut -c1-120; done
date +%T
timeout 100 python3 cli/anchors/sdpa.py $O/sdpa.json > $O/sdpa.log 2>&1; echo sdpa rc $?
date +%T
cd $OUT && tar czf q.tgz q && rm -rf q
