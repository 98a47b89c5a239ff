# The kernel and its runtime form are in a39c1ac (reverted after these calls): build that commit to rerun.
# H200 call (`bash evidence/h200/prefill-pingpong/run.sh`, this directory's call-1/):
# `attn_prefill_pingpong` (the device's prefill form on sm_90a) against `attn_prefill_mma`'s
# 64-token form in the same binary (bench-prefill times both), alternated twice, PyTorch
# SDPA in the same call; the prefill and panels suites, validate of both kernels, ptxas,
# compute-sanitizer racecheck and synccheck of the new kernel, and the decode step.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s %s:%s\n", $2, $3, $5, $6}'; }
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked|CUDA|cuda" $E/prefill-suite.log | head -8
timeout 60 /tmp/b/panels --nocapture --test-threads 1 > $E/panels.log 2>&1; grep -E "^test result|panicked" $E/panels.log
timeout 120 $K validate --backend cuda,vulkan --kernel attn_prefill_pingpong --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
for i in 1 2; do
  $K bench-prefill --backend cuda --runs 10 --evidence $E/p-$i > $E/p-$i.md 2> $E/p-$i.log; echo "run $i:"; row $E/p-$i.md
done
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_prefill_pingpong.cu > $E/ptxas.log 2>&1; grep -E 'registers|spill|C75' $E/ptxas.log | sed 's/.*Used //' | sort | uniq -c
timeout 150 compute-sanitizer --tool racecheck $K validate --backend cuda --kernel attn_prefill_pingpong > $E/racecheck.log 2>&1; echo "racecheck exit $?"; grep -E "ERROR SUMMARY|hazard" $E/racecheck.log | head -3
timeout 100 compute-sanitizer --tool synccheck $K validate --backend cuda --kernel attn_prefill_pingpong > $E/synccheck.log 2>&1; echo "synccheck exit $?"; grep -E "ERROR SUMMARY" $E/synccheck.log | head -3
$K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 > $E/decode.md 2> $E/decode.log; grep "tensor cores" $E/decode.md | awk -F'|' '{printf "%s %s:%s\n", $2, $3, $6}' | head -8
tar czf $OUT/ev.tgz -C /tmp ev
