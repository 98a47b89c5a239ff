# Timing probes, one device call: attn_prefill_mma with 128-query workgroups (256
# invocations, one per SM; /tmp/gen-q128 and the binary of that runtime) against the
# tree's kernel, alternated twice on CUDA; and NVIDIA Vulkan's one-buffer decode step
# with the copies after block 0 dropped (a compute bound) or only the last block's
# products kept (a copy bound), against the kernel.
# The probe: 66c4a09 with q128.patch, its binary (.devbin/q128) and `onekernel gen --out
# /tmp/gen-q128`; the Vulkan part ran without CUDA in the process (low clocks), its
# probes' manifests unpatched (refused): vulkan-decode-bounds/ repeats it.
. evidence/h200/device_prelude.sh
gunzip -c .devbin/q128/onekernel.gz > /tmp/b/q128; gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; chmod +x /tmp/b/*
tar xzf .devbin/probes.tgz -C /tmp
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  /tmp/b/q128 bench-prefill --backend cuda --runs 10 --out /tmp/gen-q128 > $E/q128-$i.md 2>&1; echo "q128-$i $(prow $E/q128-$i.md)"
  /tmp/b/base bench-prefill --backend cuda --runs 10 > $E/base-$i.md 2>&1; echo "base-$i $(prow $E/base-$i.md)"
done
/tmp/b/q128 validate --backend cuda --kernel attn_prefill_mma --out /tmp/gen-q128 > $E/validate-q128.log 2>&1; tail -3 $E/validate-q128.log
for g in base nocopy nocompute; do
  o=""; [ $g != base ] && o="--out /tmp/gen-vk-$g"
  /tmp/b/base bench --backend vulkan --tensor-cores 2 --tensor-cores-only --runs 20 $o > $E/vk-$g.md 2>&1; echo "vk-$g $(drow $E/vk-$g.md)"
done
cp -r $E/. $OUT/
