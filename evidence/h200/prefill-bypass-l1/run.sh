# H200 call: `attn_prefill_mma` with its K/V copies past L1 (`async_copy_bypass_l1`;
# .devbin/new: the working tree's binary and generated/) against the kernels of
# da6327f (.devbin/old: its binary and generated/), alternated twice on CUDA, SDPA in
# the same call; the prefill suite, the word-transfer tests on NVIDIA's Vulkan and CUDA,
# and validate of the kernel on both backends.
. evidence/h200/device_prelude.sh
rm -rf /tmp/old; mkdir -p /tmp/old; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
timeout 100 /tmp/b/attention_prefill_tensor_cores --test-threads 1 2>&1 | grep -E "^test |panicked|result|SKIPPED" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 /tmp/b/word_transfers_on_vulkan --test-threads 1 --nocapture 2>&1 | grep -E "^test |panicked|result|SKIPPED" > $E/word-transfers.log; cat $E/word-transfers.log
timeout 120 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate prefill exit $?: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -c SKIPPED $E/validate-prefill.log) skipped, $(grep -c MISMATCH $E/validate-prefill.log) mismatches"
for i in 1 2; do
  timeout 100 $K bench-prefill --backend cuda --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "prefill new $i: "; prow $E/pnew-$i.md
  timeout 100 $O bench-prefill --backend cuda --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "prefill old $i: "; prow $E/pold-$i.md
done
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn" $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
