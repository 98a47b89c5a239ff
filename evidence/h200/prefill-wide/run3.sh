# call-3/ (H200), run on the tree of run2.sh: timing probes of hand-edited copies of the working tree's
# generated `attn_prefill_mma` (variants.py: keep, uncond, pv128, pvkeep) against the
# copy itself, prefill on CUDA, alternated twice; `keep` computes wrong results by design.
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-wide/variants.py generated /tmp/v keep,uncond,pv128,pvkeep > /dev/null; ln -s $PWD/generated /tmp/v/base
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s:%s ", $3, $6}'; echo; }
for i in 1 2; do for v in base keep uncond pv128 pvkeep; do
  $K bench-prefill --backend cuda --runs 10 --out /tmp/v/$v > $E/p-$v-$i.md 2> $E/p-$v-$i.log; echo -n "$v $i: "; row $E/p-$v-$i.md; done; done
for v in uncond pv128; do timeout 60 $K validate --backend cuda --kernel attn_prefill_mma --out /tmp/v/$v > $E/validate-$v.log 2>&1; echo "validate $v exit $?: $(grep -c ' ok ' $E/validate-$v.log) ok, $(grep -c MISMATCH $E/validate-$v.log) mismatches"; done
tar czf $OUT/ev.tgz -C /tmp ev
