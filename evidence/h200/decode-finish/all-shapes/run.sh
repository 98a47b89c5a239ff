#!/bin/bash
# The tensor-core step alone at the six decode shapes (bench --tensor-cores-only), SDPA in the same call.
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
B=.devbin/d2; O=$OUT/q; mkdir -p $O; gunzip -f $B/*.gz; chmod +x $B/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $O/device.txt; date +%T
timeout 200 $B/onekernel bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $O > $O/bench.md 2> $O/bench.log; echo bench rc $?; grep tensor_cores $O/bench.log | cut -c1-130
date +%T
timeout 60 python3 cli/anchors/sdpa.py $O/bench-sdpa.json > $O/bench-sdpa.log 2>&1; echo sdpa rc $?
date +%T
cd $OUT && tar czf q.tgz q && rm -rf q
