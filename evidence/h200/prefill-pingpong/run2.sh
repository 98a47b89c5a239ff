# The kernel and its runtime form are in a39c1ac (reverted after these calls): build that commit to rerun.
# H200 call (`bash evidence/h200/prefill-pingpong/run2.sh`, call-2/): `attn_prefill_pingpong`
# with copies three phases ahead (K in three buffers, V in four), alternating warpgroups
# (the tree) and in lockstep (`variants.py`, a timing probe), each run against
# `attn_prefill_mma`'s 64-token form in the same bench-prefill, alternated twice; the
# prefill suite, validate, racecheck.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s %s:%s\n", $2, $3, $5, $6}'; }
timeout 100 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 100 $K validate --backend cuda --kernel attn_prefill_pingpong > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c MISMATCH $E/validate.log) mismatches"
for i in 1 2; do
  $K bench-prefill --backend cuda --runs 10 --evidence $E/p-$i > $E/p-$i.md 2> $E/p-$i.log; echo "pingpong $i:"; row $E/p-$i.md
  $K bench-prefill --backend cuda --runs 10 --out .devbin/lockstep/generated > $E/l-$i.md 2> $E/l-$i.log; echo "lockstep $i:"; row $E/l-$i.md
done
timeout 150 compute-sanitizer --tool racecheck $K validate --backend cuda --kernel attn_prefill_pingpong > $E/racecheck.log 2>&1; echo "racecheck exit $?"; grep -E "RACECHECK SUMMARY" $E/racecheck.log | head -3
tar czf $OUT/ev.tgz -C /tmp ev
