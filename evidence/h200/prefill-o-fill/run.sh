# The evidence of this directory, first call (call-1/, H200): `attn_prefill_mma` with O
# zeroed before the block loop instead of in the first block's branch (.devbin/new then)
# against its parent (.devbin/old: the binary and `git archive HEAD generated` of
# 1ba07e9), alternated twice on both backends, PyTorch SDPA in the same call; a timing
# probe of the new generated/ with P · V as one wgmma m64n128k16 per 16 tokens
# (../prefill-wide/variants.py pv128); the suite, validate, ptxas, vk-stats. The final
# call is final.sh.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-wide/variants.py generated /tmp/v pv128 > /dev/null
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s:%s ", $2, $3, $6}'; echo; }
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "new $i: "; row $E/pnew-$i.md
  $O bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "old $i: "; row $E/pold-$i.md
  $K bench-prefill --backend cuda --runs 10 --out /tmp/v/pv128 > $E/ppv128-$i.md 2> $E/ppv128-$i.log; echo -n "pv128 $i: "; row $E/ppv128-$i.md
done
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
timeout 200 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 120 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
timeout 60 $K validate --backend cuda --kernel attn_prefill_mma --out /tmp/v/pv128 > $E/validate-pv128.log 2>&1; echo "validate pv128 exit $?: $(grep -c ' ok ' $E/validate-pv128.log) ok"
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_prefill_mma.cu > $E/ptxas.log 2>&1; grep -E 'registers|spill' $E/ptxas.log | sed 's/.*Used //' | sort | uniq -c
$K vk-stats --kernel attn_prefill_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-120 | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
