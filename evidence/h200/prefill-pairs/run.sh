# H200 call: `attn_prefill_mma` with its Q values read and its outputs written in pairs
# (`load_words` / `store_words` of 2: 8-byte accesses) — .devbin/new, the working
# tree's binary and generated/ — against the kernel of 1120f79 (.devbin/old: its binary
# and generated/), alternated twice on CUDA (once on NVIDIA's Vulkan), SDPA in the same
# call; the prefill suite, the word-transfer suite and validate on both backends.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/old /tmp/ev; mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s%s:%s  ", $2, $3, $6}'; echo; }
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 60 /tmp/b/word_transfers_on_vulkan --nocapture 2>&1 | grep -E "^test |SKIP|panicked|result" > $E/word-transfers.log; grep -E "^test result|panicked|SKIP" $E/word-transfers.log
timeout 150 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
for i in 1 2; do
  B=cuda; [ $i = 1 ] && B=cuda,vulkan
  timeout 200 $K bench-prefill --backend $B --runs 10 --evidence $E/new-$i > $E/new-$i.md 2> $E/new-$i.log; echo -n "new $i: "; row $E/new-$i.md
  timeout 200 $O bench-prefill --backend $B --runs 10 --out /tmp/old/generated > $E/old-$i.md 2> $E/old-$i.log; echo -n "old $i: "; row $E/old-$i.md
done
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn" $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
