# H200 call (`bash evidence/h200/compiler-warnings/run.sh`): ptxas's performance warnings
# through `Backend::compiler_warnings` — the panels suite on sm_90a (none for the panel
# kernels, some for `panel_faults`) and on plain sm_90 (skipped: no `wgmma`), the prefill
# suite (none for `attn_prefill_mma`), validate of the tile kernels on CUDA, and a
# bench-prefill run on CUDA (no warning line on stderr).
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
timeout 100 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90a.log 2>&1; grep -E "^test |result|panicked|C75" $E/panels-sm90a.log | cut -c1-200
ONEKERNEL_CUDA_WGMMA=0 timeout 100 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90.log 2>&1; grep -E "^test result|panicked|SKIPPED on CUDA:" $E/panels-sm90.log
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 > $E/prefill-suite.log 2>&1; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 150 $K validate --backend cuda --kernel attn_prefill_mma --kernel tile_probe --kernel attn_decode_chunk_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c MISMATCH $E/validate.log) mismatches, $(grep -c 'compiler WARNING' $E/validate.log) warnings"
$K bench-prefill --backend cuda --runs 10 > $E/bench-prefill.md 2> $E/bench-prefill.log; grep -c "compiler WARNING" $E/bench-prefill.log; grep 'tensor cores (' $E/bench-prefill.md | awk -F'|' '{printf "%s:%s  ", $3, $6}'; echo
tar czf $OUT/ev.tgz -C /tmp ev
