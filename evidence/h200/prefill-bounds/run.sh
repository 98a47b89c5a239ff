# H200 call: bounds on attn_prefill_mma's step (the kernel of 00a4cbd) from timing probes
# of its generated CUDA (probes.py: the K/V copies removed; the Q rows' loads removed),
# each alternated twice with the kernel in the same binary; the probes' results are
# wrong by construction (no output check).
. evidence/h200/device_prelude.sh
python3 evidence/h200/prefill-bounds/probes.py generated /tmp/pb
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  $K bench-prefill --backend cuda --runs 10 > $E/pkernel-$i.md 2>&1; echo "kernel-$i $(prow $E/pkernel-$i.md)"
  for p in nocopy noq; do
    $K bench-prefill --backend cuda --runs 10 --out /tmp/pb-$p > $E/p$p-$i.md 2>&1; echo "$p-$i $(prow $E/p$p-$i.md)"
  done
done
tar czf $OUT/ev.tgz -C /tmp ev
