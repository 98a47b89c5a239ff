# The final call (final/, H200; `bash evidence/h200/prefill-o-fill/final.sh`): `attn_prefill_mma` with O zeroed before the block loop
# where it multiplies through panels and `P · V` as eight-accumulator panels (one wgmma
# m64n128k16 per 16 tokens) — the working tree, .devbin/new — against its parent
# (.devbin/old: the binary and `git archive HEAD generated` of 1ba07e9), alternated twice
# on both backends, PyTorch SDPA in the same call; the panels suite on sm_90a, on plain
# sm_90 (ONEKERNEL_CUDA_WGMMA=0) and on NVIDIA's Vulkan; the prefill suite, validate,
# ptxas, vk-stats.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s:%s ", $2, $3, $6}'; echo; }
timeout 60 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90a.log 2>&1; grep -E "^test result|panicked" $E/panels-sm90a.log
ONEKERNEL_CUDA_WGMMA=0 timeout 60 /tmp/b/panels --nocapture --test-threads 1 > $E/panels-sm90.log 2>&1; grep -E "^test result|panicked" $E/panels-sm90.log
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "new $i: "; row $E/pnew-$i.md
  $O bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "old $i: "; row $E/pold-$i.md
done
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_prefill_mma.cu > $E/ptxas.log 2>&1; grep -E 'registers|spill' $E/ptxas.log | sed 's/.*Used //' | sort | uniq -c
$K vk-stats --kernel attn_prefill_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-120 | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
