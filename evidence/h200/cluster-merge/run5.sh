# H200 call: cluster launches alone (probes5.py) against the kernels of generated/
# (988f614), alternated twice; SDPA (decode) in the same call. Results: call-5/.
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/cluster-merge/probes5.py generated /tmp/p5 > $E/probes.log
for i in 1 2; do
  for v in base dclus; do
    G=generated; [ $v != base ] && G=/tmp/p5-$v
    timeout 100 $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --shape 16x4096 --shape 16x32768 --out $G > $E/d-$v-$i.md 2> $E/d-$v-$i.log
    echo -n "decode $v $i: "; drow $E/d-$v-$i.md
  done
  for v in base pclus; do
    G=generated; [ $v != base ] && G=/tmp/p5-$v
    timeout 100 $K bench-prefill --backend cuda --runs 10 --out $G > $E/p-$v-$i.md 2> $E/p-$v-$i.log
    echo -n "prefill $v $i: "; prow $E/p-$v-$i.md
  done
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
tar czf $OUT/ev.tgz -C /tmp ev
