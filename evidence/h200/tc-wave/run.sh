# H200 call: the tensor-core decode step at 1 × 32768 with chunks that fill every
# workgroup slot (132 SMs × 2: 33 chunks per KV head of 1000 or 1008 tokens, 264
# workgroups) against the scheduler's 1024 (32 chunks, 256 workgroups); the binary and
# generated/ of 7a10262, alternated three times; SDPA in the same call. Results: call-1/.
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,count --format=csv,noheader | tee $E/device.txt
for i in 1 2 3; do
  for c in sched 1000 1008; do
    X=""; [ $c != sched ] && X="--tc-chunk $c"
    timeout 100 $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --shape 1x32768 $X > $E/d-$c-$i.md 2> $E/d-$c-$i.log
    echo -n "decode $c $i: "; drow $E/d-$c-$i.md
  done
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -3
tar czf $OUT/ev.tgz -C /tmp ev
