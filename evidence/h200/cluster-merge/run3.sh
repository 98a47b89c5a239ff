# H200 call: timing probes of the decode merge (probes3.py: the arrival counter read
# after the block loop, with and without an L1 prefetch of the other chunks' partial
# results) against the kernels of generated/ (a38e559), alternated twice; validate of
# both probes on CUDA; SDPA (decode) in the same call. Results: call-3/.
. evidence/h200/device_prelude.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/cluster-merge/probes3.py generated /tmp/pk > $E/probes.log
for v in peek peekpf; do
  timeout 150 $K validate --backend cuda --kernel attn_decode_chunk_mma --out /tmp/pk-$v > $E/validate-$v.log 2>&1
  echo "validate $v exit $?: $(grep -c ' ok ' $E/validate-$v.log) ok, $(grep -c SKIPPED $E/validate-$v.log) skipped, $(grep -c MISMATCH $E/validate-$v.log) mismatches"
done
for i in 1 2; do
  for v in base peek peekpf; do
    G=generated; [ $v != base ] && G=/tmp/pk-$v
    timeout 100 $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --shape 16x4096 --shape 16x32768 --shape 1x32768 --out $G > $E/d-$v-$i.md 2> $E/d-$v-$i.log
    echo -n "decode $v $i: "; drow $E/d-$v-$i.md
  done
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
tar czf $OUT/ev.tgz -C /tmp ev
