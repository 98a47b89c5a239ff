# attn_prefill_mma with the first block's copies issued before the Q rows are staged
# (this tree) against the same kernel without (/tmp/gen-pairs: two row tiles per
# workgroup, the first block copied in the loop) and against 66c4a09 (one row tile per
# workgroup), alternated twice on CUDA; NVIDIA Vulkan once; the suite and `validate`.
# This tree: the kernel of prefill-two-tiles/ with first-block.patch; /tmp/gen-pairs:
# `onekernel gen` of that kernel, its manifest's source hash set to this tree's.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; gunzip -c .devbin/new/t/attention_prefill_tensor_cores.gz > /tmp/b/tpre; chmod +x /tmp/b/*
mkdir -p /tmp/gbase && tar xzf .devbin/base/generated.tgz -C /tmp/gbase && tar xzf .devbin/probes.tgz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  be=cuda; [ $i = 1 ] && be=cuda,vulkan
  $K bench-prefill --backend $be --runs 10 > $E/pnew-$i.md 2>&1; echo "new-$i $(prow $E/pnew-$i.md)"
  $K bench-prefill --backend cuda --runs 10 --out /tmp/gen-pairs > $E/ppairs-$i.md 2>&1; echo "pairs-$i $(prow $E/ppairs-$i.md)"
  /tmp/b/base bench-prefill --backend cuda --runs 10 --out /tmp/gbase/generated > $E/pbase-$i.md 2>&1; echo "base-$i $(prow $E/pbase-$i.md)"
done
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -ci skipped $E/validate-prefill.log) skipped, $(grep -ci mismatch $E/validate-prefill.log) mismatch"
/tmp/b/tpre --nocapture > $E/test-prefill.log 2>&1; grep -E "test result" $E/test-prefill.log
cp -r $E/. $OUT/
