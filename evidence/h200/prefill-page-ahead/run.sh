# attn_prefill_mma with each block's pages read from the block table one step before
# their cells are written (this tree) against e73e194's generated/ (read and written in
# the same step; its manifest's source hash set to this tree's: the runtime is the same),
# alternated twice on CUDA, NVIDIA Vulkan once; the suite and `validate`.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/new/t/attention_prefill_tensor_cores.gz > /tmp/b/tpre; chmod +x /tmp/b/*
tar xzf .devbin/probes.tgz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  be=cuda; [ $i = 1 ] && be=cuda,vulkan
  $K bench-prefill --backend $be --runs 10 > $E/pnew-$i.md 2>&1; echo "new-$i $(prow $E/pnew-$i.md)"
  $K bench-prefill --backend $be --runs 10 --out /tmp/gen-base > $E/pbase-$i.md 2>&1; echo "base-$i $(prow $E/pbase-$i.md)"
done
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -ci skipped $E/validate-prefill.log) skipped, $(grep -ci mismatch $E/validate-prefill.log) mismatch"
/tmp/b/tpre --nocapture > $E/test-prefill.log 2>&1; grep -E "test result" $E/test-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
