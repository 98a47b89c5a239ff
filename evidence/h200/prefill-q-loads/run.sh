# The evidence of this directory, in one device call (H200): `attn_prefill_mma` with the Q
# tile's values loaded before any is converted. Binaries built on the development
# machine (`cargo build --release -p onekernel-cli`; `cargo test --release --no-run --test
# attention_prefill_tensor_cores`), stripped and gzipped into .devbin/new; the NVIDIA
# Vulkan loader packages in .gl (docs/RUNTIME.md). Everything lands in ev/, returned as a
# tarball. The A/B against the parent's binary and generated/ (`ab/`) and the
# per-workgroup timelines (`../prefill-timeline/`) came from the calls before it.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
suite() { /tmp/b/$1 --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE"; }
{ suite attention_prefill_tensor_cores; echo "== ONEKERNEL_CUDA_WGMMA=0"; ONEKERNEL_CUDA_WGMMA=0 suite attention_prefill_tensor_cores; } > $E/prefill-suite.log 2>&1; grep -E "^test result|panicked" $E/prefill-suite.log
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -c -Xptxas -v generated/cuda/attn_prefill_mma.cu -o /tmp/p.o > $E/ptxas.log 2>&1; grep -E "registers|spill" $E/ptxas.log | sort | uniq -c
$K vk-stats --kernel attn_prefill_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-120
$K bench-prefill --backend cuda,vulkan --runs 20 --evidence $E > $E/bench-prefill.md 2> $E/bench-prefill.log; grep fast $E/bench-prefill.md
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 --log-file $E/sanitize-memcheck.log $K validate --backend cuda --kernel attn_prefill_mma > $E/sanitize-memcheck.out 2>&1; echo "memcheck exit $?: $(grep -c ' ok ' $E/sanitize-memcheck.out) verdicts ok; $(tail -n 1 $E/sanitize-memcheck.log)"
tar czf $OUT/ev.tgz -C /tmp ev
