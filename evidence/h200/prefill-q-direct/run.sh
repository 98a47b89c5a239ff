# attn_prefill_mma with each group's Q rows loaded straight into its A tiles (`tile_set`;
# this tree) against the same kernel staging them through the K/V buffer (bc40161's
# generated/, its manifest's source hash set to this tree's: the runtime is the same),
# alternated twice on CUDA and NVIDIA Vulkan; the suite, `validate`, SDPA in the call.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/new/t/attention_prefill_tensor_cores.gz > /tmp/b/tpre; chmod +x /tmp/b/*
tar xzf .devbin/probes.tgz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 > $E/pnew-$i.md 2>&1; echo "new-$i $(prow $E/pnew-$i.md)"
  $K bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/gen-staged > $E/pstaged-$i.md 2>&1; echo "staged-$i $(prow $E/pstaged-$i.md)"
done
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -ci skipped $E/validate-prefill.log) skipped, $(grep -ci mismatch $E/validate-prefill.log) mismatch"
/tmp/b/tpre --nocapture > $E/test-prefill.log 2>&1; grep -E "test result" $E/test-prefill.log
python3 cli/anchors/sdpa_prefill.py $E/sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "^sdpa_cudnn" $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
