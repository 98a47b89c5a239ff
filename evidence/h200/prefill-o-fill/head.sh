# head/ (H200; `bash evidence/h200/prefill-o-fill/head.sh`): the final tree after the panel
# helpers were folded (one descriptor helper; the prefill kernel's SASS unchanged, compared
# with ptxas 13.5): the panels suite on sm_90a and plain sm_90 and NVIDIA's Vulkan, the
# prefill suite, `validate` of `attn_prefill_mma` and `tile_probe` on both backends.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
timeout 60 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90a.log 2>&1; grep -E "^test result|panicked" $E/panels-sm90a.log
ONEKERNEL_CUDA_WGMMA=0 timeout 60 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90.log 2>&1; grep -E "^test result|panicked" $E/panels-sm90.log
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 $K validate --backend cuda,vulkan --kernel attn_prefill_mma --kernel tile_probe > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
tar czf $OUT/ev.tgz -C /tmp ev
