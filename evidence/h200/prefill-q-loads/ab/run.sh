# The A/B of this directory, one device call (H200), before the evidence call of ../run.sh:
# the binary and generated/ of the working tree (.devbin/new) against those of the parent
# (.devbin/old: `git archive HEAD generated`, binary built from HEAD), alternated twice.
# The same call also timed a change to attn_decode_chunk_mma's Q tile that was not kept
# (docs/PERFORMANCE.md, tried ideas); its lines are not kept here.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log
  $O bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log
done
timeout 150 $K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_prefill_mma > $E/validate.log 2>&1
grep attn_prefill_mma $E/validate.log > $E/validate-prefill.log
# (pnew-1/bench-prefill.json is kept as pnew-1.json.)
tar czf $OUT/ev.tgz -C /tmp ev
