# attn_prefill_mma with two row tiles per workgroup (256 invocations: two heads of one
# KV head, or two query blocks of one head) against its parent (66c4a09: one tile of 64
# queries, 128 invocations) and against the probe with 128-query tiles (evidence/h200/prefill-q128/),
# alternated twice; the suite, `validate`, and SDPA in the same call.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; gunzip -c .devbin/q128/onekernel.gz > /tmp/b/q128
gunzip -c .devbin/new/t/attention_prefill_tensor_cores.gz > /tmp/b/tpre; chmod +x /tmp/b/*
mkdir -p /tmp/gbase && tar xzf .devbin/base/generated.tgz -C /tmp/gbase && tar xzf .devbin/probes.tgz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 > $E/pnew-$i.md 2>&1; echo "new-$i $(prow $E/pnew-$i.md)"
  /tmp/b/base bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/gbase/generated > $E/pbase-$i.md 2>&1; echo "base-$i $(prow $E/pbase-$i.md)"
  /tmp/b/q128 bench-prefill --backend cuda --runs 10 --out /tmp/gen-q128 > $E/pq128-$i.md 2>&1; echo "q128-$i $(prow $E/pq128-$i.md)"
done
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -ci skipped $E/validate-prefill.log) skipped, $(grep -ci mismatch $E/validate-prefill.log) mismatch"
/tmp/b/tpre --nocapture > $E/test-prefill.log 2>&1; grep -E "test result|NMSE" $E/test-prefill.log | grep -v " cpu " | tail -12
python3 cli/anchors/sdpa_prefill.py $E/sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; tail -6 $E/bench-sdpa-prefill.log
cp -r $E/. $OUT/
