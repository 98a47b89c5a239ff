# NVIDIA Vulkan's one-buffer decode step with the copies after block 0 dropped (a
# compute bound) or only the last block's products kept (a copy bound), against the
# kernel; CUDA in the same run (Vulkan alone runs at low clocks on the H200).
# The probes: 66c4a09 with nocopy.patch or nocompute.patch, `onekernel gen --out
# /tmp/gen-vk-…`, each manifest's source hashes set to 66c4a09's (the binary checks them).
. evidence/h200/device_prelude.sh
gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; chmod +x /tmp/b/*
tar xzf .devbin/probes.tgz -C /tmp
for g in base nocopy nocompute; do
  o=""; [ $g != base ] && o="--out /tmp/gen-vk-$g"
  /tmp/b/base bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 $o > $E/vk-$g.md 2>&1; echo "vk-$g"; grep -E "tensor_cores_2stage step" $E/vk-$g.md | awk '{print $1,$3,$5,$9,$10}' | tr '\n' ';'; echo
done
cp -r $E/. $OUT/
