# H200 call: timing probes (probes.py) of the decode step's merge through a cluster of
# two workgroups against the kernels of generated/, and a bound on the prefill block
# loop's copies; alternated twice, SDPA (decode) in the same call; generated/ and the
# binary of da6327f. Results: call-1/ (the cluster probes fail `validate` at its first
# case, a launch of one chunk per sequence, which a cluster of two cannot take).
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/cluster-merge/probes.py generated /tmp/pr > $E/probes.log
for v in cbar dsmem; do
  timeout 120 $K validate --backend cuda --kernel attn_decode_chunk_mma --out /tmp/pr-$v > $E/validate-$v.log 2>&1
  echo "validate $v exit $?: $(grep -c ' ok ' $E/validate-$v.log) ok, $(grep -c MISMATCH $E/validate-$v.log) mismatches"
done
for i in 1 2; do
  for v in base nomerge cbar dsmem; do
    G=generated; [ $v != base ] && G=/tmp/pr-$v
    timeout 100 $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --shape 16x4096 --shape 16x32768 --out $G > $E/d-$v-$i.md 2> $E/d-$v-$i.log
    echo -n "decode $v $i: "; drow $E/d-$v-$i.md
  done
done
for i in 1 2; do
  for v in base nocopy; do
    G=generated; [ $v != base ] && G=/tmp/pr-$v
    timeout 100 $K bench-prefill --backend cuda --runs 10 --out $G > $E/p-$v-$i.md 2> $E/p-$v-$i.log
    echo -n "prefill $v $i: "; prow $E/p-$v-$i.md
  done
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
tar czf $OUT/ev.tgz -C /tmp ev
