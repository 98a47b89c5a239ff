set -x
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
/tmp/b/panels --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIPPED|panicked|result|assert" | tee $E/panels.log
ONEKERNEL_CUDA_WGMMA=0 /tmp/b/panels --nocapture --test-threads 1 panel_products 2>&1 | grep -E "within|panicked|result|assert" | tee -a $E/panels.log
/tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |panicked|result|SKIP|NMSE|cos" | tee $E/prefill-suite.log
/tmp/b/tiles --test-threads 1 2>&1 | grep -E "^test |result|panicked" | tee $E/tiles.log
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -c -Xptxas -v generated/cuda/attn_prefill_mma.cu -o /tmp/p.o > $E/ptxas.log 2>&1; grep -E "registers|spill|Compiling" $E/ptxas.log | head -20
cuobjdump -sass /tmp/p.o | grep -c HGMMA
/tmp/b/onekernel bench-prefill --backend cuda,vulkan --runs 20 --evidence $E > $E/bench-prefill.md 2> $E/bench-prefill.log; cat $E/bench-prefill.md
ONEKERNEL_CUDA_WGMMA=0 /tmp/b/onekernel bench-prefill --backend cuda --runs 20 > $E/bench-prefill-mmasync.md 2>&1; cat $E/bench-prefill-mmasync.md
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; tail -8 $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
