# simple/ (H200; `bash evidence/h200/prefill-o-fill/simple.sh`): `attn_prefill_mma` with O
# zeroed before the block loop in both forms and no zeroing branch (the working tree,
# .devbin/new; its 64-token form's SASS is that of `final/`) against the tree that kept the
# branch in the 32-token form (.devbin/head: 93684ca's binary and generated/) and against
# 1ba07e9 (.devbin/old), alternated twice on both backends; the prefill suite and
# `validate` of the kernel on both backends.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/h /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/head/onekernel.gz > /tmp/h/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/h/* /tmp/old/*
tar xzf .devbin/head/generated.tgz -C /tmp/h; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s:%s ", $2, $3, $6}'; echo; }
for i in 1 2; do
  $K bench-prefill --backend cuda,vulkan --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "new $i: "; row $E/pnew-$i.md
  /tmp/h/onekernel bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/h/generated > $E/phead-$i.md 2> $E/phead-$i.log; echo -n "head $i: "; row $E/phead-$i.md
  /tmp/old/onekernel bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "old $i: "; row $E/pold-$i.md
done
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
$K vk-stats --kernel attn_prefill_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-120 | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
