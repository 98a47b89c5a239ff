set -x
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
/tmp/b/panels --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIPPED|panicked|result" | tee $E/panels.log
ONEKERNEL_CUDA_WGMMA=0 /tmp/b/panels --nocapture --test-threads 1 panel_products 2>&1 | grep -E "within|SKIPPED|panicked|result" | tee -a $E/panels.log
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; tail -4 $E/validate.log
for tool in memcheck racecheck synccheck initcheck; do compute-sanitizer --tool $tool --error-exitcode 9 --log-file $E/sanitize-$tool.log $K validate --backend cuda --kernel attn_prefill_mma > $E/sanitize-$tool.out 2>&1; echo "$tool rc=$? $(grep -c ' ok ' $E/sanitize-$tool.out) ok; $(tail -n 1 $E/sanitize-$tool.log)"; done
for i in 1 2; do for w in 1 0; do echo "== wgmma=$w run $i"; ONEKERNEL_CUDA_WGMMA=$w $K bench-prefill --backend cuda --runs 20 2>/dev/null | grep "fast"; done; done | tee $E/prefill-ab.log
for w in 1 0; do echo "== decode wgmma=$w"; ONEKERNEL_CUDA_WGMMA=$w $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 2>/dev/null | grep -E "^\|" ; done | tee $E/decode-ab.log
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json 2>/dev/null | grep -E "cudnn|flash" | tee $E/bench-sdpa-prefill.log
tar czf $OUT/ev2.tgz -C /tmp ev
