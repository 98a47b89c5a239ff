# attn_prefill_mma on persistent workgroups (this tree: one workgroup per SM, each taking
# its list of tiles from the runtime's list scheduling, the next tile's Q rows and first
# block copied during the current tile's last step), the same binary with a workgroup
# per tile (ONEKERNEL_PREFILL_PERSISTENT=0), and a470cb8's binary and generated/ (a
# workgroup per tile, scheduled by the hardware), alternated twice on CUDA (NVIDIA Vulkan
# in the first round); SDPA, the suite and `validate` in the same call (call-3/, the
# form of persistent.patch). call-1/ and call-2/ ran the earlier forms the row in
# docs/PERFORMANCE.md describes, with this script less its per-tile line; ncu/ holds
# prefill-ncu/ncu.sh's regions for the form of call-2/.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; gunzip -c .devbin/new/t/attention_prefill_tensor_cores.gz > /tmp/b/tpre; chmod +x /tmp/b/*
mkdir -p /tmp/gbase && tar xzf .devbin/base/generated.tgz -C /tmp/gbase
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  be=cuda; [ $i = 1 ] && be=cuda,vulkan
  $K bench-prefill --backend $be --runs 10 > $E/pnew-$i.md 2>&1; echo "new-$i $(prow $E/pnew-$i.md)"
  ONEKERNEL_PREFILL_PERSISTENT=0 $K bench-prefill --backend cuda --runs 10 > $E/ptile-$i.md 2>&1; echo "per-tile-$i $(prow $E/ptile-$i.md)"
  /tmp/b/base bench-prefill --backend $be --runs 10 --out /tmp/gbase/generated > $E/pbase-$i.md 2>&1; echo "base-$i $(prow $E/pbase-$i.md)"
done
python3 cli/anchors/sdpa_prefill.py $E/sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "^sdpa_(cudnn|flash) " $E/bench-sdpa-prefill.log
$K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -ci skipped $E/validate-prefill.log) skipped, $(grep -ci mismatch $E/validate-prefill.log) mismatch"
/tmp/b/tpre --nocapture > $E/test-prefill.log 2>&1; grep -E "test result|panicked" $E/test-prefill.log | tail -5
tar czf $OUT/ev.tgz -C /tmp ev
