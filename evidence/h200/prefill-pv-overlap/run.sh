# The kernel of .devbin/new is 7b555ec with kernel.patch applied (not kept); regenerate generated/ after applying it.
# H200 call (`bash evidence/h200/prefill-pv-overlap/run.sh`, call-1/): `attn_prefill_mma`'s
# 64-token form issuing each step's S and the block before's `P · V` together (.devbin/new:
# the working tree's binary and generated/), the same with only S waited for before the
# softmax (`variants.py`, .devbin/pvbeside: a timing probe of `wgmma.wait_group 4`), and
# the kernel before (.devbin/old: 7b555ec's binary and generated/), alternated twice; the
# prefill suite and validate of the tree's kernel on CUDA.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/old /tmp/ev; mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s:%s  ", $3, $6}'; echo; }
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 $K validate --backend cuda --kernel attn_prefill_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c MISMATCH $E/validate.log) mismatches"
for i in 1 2; do
  $O bench-prefill --backend cuda --runs 10 --out /tmp/old/generated > $E/old-$i.md 2> $E/old-$i.log; echo -n "old $i: "; row $E/old-$i.md
  $K bench-prefill --backend cuda --runs 10 --evidence $E/new-$i > $E/new-$i.md 2> $E/new-$i.log; echo -n "new $i: "; row $E/new-$i.md
  $K bench-prefill --backend cuda --runs 10 --out .devbin/pvbeside/generated > $E/probe-$i.md 2> $E/probe-$i.log; echo -n "probe $i: "; row $E/probe-$i.md
done
tar czf $OUT/ev.tgz -C /tmp ev
