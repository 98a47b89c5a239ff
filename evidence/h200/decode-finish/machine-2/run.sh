#!/bin/bash
# finish on the card that comes: A/B against main (own binary and generated/), SDPA, then compute-sanitizer over validate.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
B=.devbin/d1; M=.devbin/mainbin; O=$OUT/q; mkdir -p $O; gunzip -f $B/*.gz $B/t/*.gz $M/*.gz; chmod +x $B/onekernel $B/t/* $M/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
S="--shape 1x32768 --shape 16x4096 --shape 64x4096"
i=0; for x in new main new main; do i=$((i+1)); K=$B/onekernel; D=generated; [ $x = main ] && K=$M/onekernel && D=.devbin/maingen/generated; timeout 100 $K bench --backend cuda --tensor-cores 2 $S --runs 20 --out $D --evidence $O/ev-$x-$i > $O/bench-$x-$i.md 2> $O/bench-$x-$i.log; echo $x rc $?; grep tensor_cores $O/bench-$x-$i.log | cut -c1-120; done
timeout 60 python3 cli/anchors/sdpa.py $O/sdpa.json > $O/sdpa.log 2>&1; echo sdpa rc $?
date +%T
for t in memcheck racecheck; do timeout 110 compute-sanitizer --tool $t $B/onekernel validate --backend cuda --kernel attn_decode_chunk_mma > $O/sanitize-$t.log 2>&1; echo $t rc $?; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|HAZARD" $O/sanitize-$t.log | head -3; grep -c " ok " $O/sanitize-$t.log; done
date +%T
cd $OUT && tar czf q.tgz q && rm -rf q
