# The evidence of this directory, in one device call (H200): binaries built on the
# development machine (`cargo build --release -p onekernel-cli`, `cargo test --release
# --no-run` for the suites), stripped and gzipped into .devbin/new; the NVIDIA Vulkan
# loader packages in .gl (docs/RUNTIME.md). Everything lands in ev/, returned as a tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
suite() { /tmp/b/$1 --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE"; }
{ suite panels; echo "== ONEKERNEL_CUDA_WGMMA=0"; ONEKERNEL_CUDA_WGMMA=0 suite panels; } > $E/panels.log 2>&1
{ suite attention_prefill_tensor_cores; echo "== ONEKERNEL_CUDA_WGMMA=0"; ONEKERNEL_CUDA_WGMMA=0 suite attention_prefill_tensor_cores; } > $E/prefill-suite.log 2>&1
{ suite tiles; suite attention_tensor_cores; } > $E/tiles-decode-suites.log 2>&1
grep -E "^test result|panicked" $E/*.log
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -c -Xptxas -v generated/cuda/attn_prefill_mma.cu -o /tmp/p.o > $E/ptxas.log 2>&1; grep -E "registers|spill|entry" $E/ptxas.log
echo "HGMMA in the sm_90a object: $(cuobjdump -sass /tmp/p.o | grep -c HGMMA)"
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; tail -n 2 $E/validate.log
for tool in memcheck racecheck synccheck initcheck; do compute-sanitizer --tool $tool --error-exitcode 9 --log-file $E/sanitize-$tool.log $K validate --backend cuda --kernel attn_prefill_mma > $E/sanitize-$tool.out 2>&1; echo "$tool exit $?: $(grep -c ' ok ' $E/sanitize-$tool.out) verdicts ok; $(tail -n 1 $E/sanitize-$tool.log)"; done
$K bench-prefill --backend cuda,vulkan --runs 20 --evidence $E > $E/bench-prefill.md 2> $E/bench-prefill.log; cat $E/bench-prefill.md
ONEKERNEL_CUDA_WGMMA=0 $K bench-prefill --backend cuda --runs 20 > $E/bench-prefill-mma-sync.md 2>&1; grep fast $E/bench-prefill-mma-sync.md
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
for w in 1 0; do echo "== decode, ONEKERNEL_CUDA_WGMMA=$w"; ONEKERNEL_CUDA_WGMMA=$w $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 2>&1 | grep -E "^\|"; done > $E/decode-tc.log; cat $E/decode-tc.log
tar czf $OUT/ev.tgz -C /tmp ev
