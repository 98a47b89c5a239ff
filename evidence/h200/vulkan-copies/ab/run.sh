#!/bin/bash
# Copies' cells read first + GLSL async_copy as one 16-byte load: validate, suites, decode and prefill A/B against HEAD (its own binary and generated/), SDPA.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
P=.devbin/p4; O=$OUT/p4; mkdir -p $O; gunzip -f $P/onekernel.gz $P/t/*.gz $P/main/onekernel.gz; chmod +x $P/onekernel $P/t/* $P/main/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 200 $P/onekernel validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_prefill_mma --kernel attn_decode_chunk --evidence $O > $O/validate.log 2>&1; echo validate rc $?; grep -c " ok " $O/validate.log; grep -vE " ok |SKIPPED" $O/validate.log | tail -4
for t in attention_tensor_cores attention_prefill_tensor_cores; do timeout 200 $P/t/$t --nocapture > $O/suite-$t.log 2>&1; echo $t rc $?; grep -E "test result|panicked" $O/suite-$t.log | cut -c1-200; done
date +%T
S="--shape 1x32768 --shape 16x4096 --shape 64x4096 --shape 16x32768 --shape 128x8192"
for x in new main new main; do K=$P/onekernel; D=generated; [ $x = main ] && K=$P/main/onekernel && D=$P/main/generated; timeout 150 $K bench --backend cuda,vulkan --tensor-cores 1,2 --tensor-cores-only $S --runs 20 --out $D --evidence $O/ev-$x > $O/bench-$x.md 2> $O/bench-$x.log; echo $x rc $?; grep -E "tensor" $O/bench-$x.log | cut -c1-100; done
date +%T
for x in new main; do K=$P/onekernel; D=generated; [ $x = main ] && K=$P/main/onekernel && D=$P/main/generated; timeout 200 $K bench-prefill --backend cuda,vulkan --runs 10 --out $D --evidence $O/pf-$x > $O/prefill-$x.md 2> $O/prefill-$x.log; echo prefill $x rc $?; grep -E "fast" $O/prefill-$x.log | cut -c1-120; done
date +%T
timeout 100 python3 cli/anchors/sdpa.py $O/sdpa.json > $O/sdpa.log 2>&1; echo sdpa rc $?; tail -8 $O/sdpa.log
date +%T
