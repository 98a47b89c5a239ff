# H200 call (`bash evidence/h200/decode-page-ahead/json.sh`): the tensor-core decode step of
# this tree (binary and generated/ of 50cdc06) on CUDA and NVIDIA Vulkan in one process,
# with its evidence JSON, and SDPA in the same call (json/): the README's decode table.
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
$K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/dnew > $E/dnew.md 2> $E/dnew.log; echo "new $(drow $E/dnew.md)"
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
tar czf $OUT/ev.tgz -C /tmp ev
