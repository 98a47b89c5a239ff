# H200 call: timing probes of the prefill copies (probes4.py: the same copy instructions
# without their L2 traffic, and no copies at all) against the kernels of generated/
# (a38e559, copies past L1), alternated twice. Results: call-4/.
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/cluster-merge/probes4.py generated /tmp/p4 > $E/probes.log
for i in 1 2; do
  for v in base sameaddr nocopy; do
    G=generated; [ $v != base ] && G=/tmp/p4-$v
    timeout 100 $K bench-prefill --backend cuda --runs 10 --out $G > $E/p-$v-$i.md 2> $E/p-$v-$i.log
    echo -n "prefill $v $i: "; prow $E/p-$v-$i.md
  done
done
tar czf $OUT/ev.tgz -C /tmp ev
