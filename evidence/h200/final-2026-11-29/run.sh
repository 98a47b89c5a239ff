# H200 call (`bash evidence/h200/final-2026-11-29/run.sh`): the tree's decode step on tensor
# cores and fast prefill against PyTorch SDPA in the same call (issues' targets), with
# the compiler's warnings (none expected) on stderr.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
$K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/decode > $E/decode.md 2> $E/decode.log; grep "tensor cores" $E/decode.md | grep "µs" | awk -F'|' '{printf "%s:%s\n", $2, $3}' | head -12; grep -c "compiler WARNING" $E/decode.log
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
$K bench-prefill --backend cuda --runs 10 --evidence $E/prefill > $E/prefill.md 2> $E/prefill.log; grep 'tensor cores (' $E/prefill.md | awk -F'|' '{printf "%s:%s  ", $3, $6}'; echo; grep -c "compiler WARNING" $E/prefill.log
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn" $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
