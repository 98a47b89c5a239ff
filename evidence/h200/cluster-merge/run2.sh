# H200 call: `attn_prefill_mma` with three K/V buffers (.devbin/s3: the binary and
# generated/ of da6327f with three-buffers.patch applied, comments aside) against the
# kernels of generated/ (da6327f), and timing probes of the copies (probes2.py);
# alternated twice. Results: call-2/.
. evidence/h200/device_prelude.sh
rm -rf /tmp/s3; mkdir -p /tmp/s3; gunzip -c .devbin/s3/onekernel.gz > /tmp/s3/onekernel; chmod +x /tmp/s3/*; S=/tmp/s3/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/cluster-merge/probes2.py generated /tmp/q nowait cg > $E/probes.log
python3 evidence/h200/cluster-merge/probes2.py .devbin/s3/generated /tmp/q3 cg >> $E/probes.log
timeout 120 $S validate --backend cuda --kernel attn_prefill_mma --out .devbin/s3/generated > $E/validate-s3.log 2>&1
echo "validate s3 exit $?: $(grep -c ' ok ' $E/validate-s3.log) ok, $(grep -c MISMATCH $E/validate-s3.log) mismatches"
for i in 1 2; do
  for v in base nowait cg s3 s3cg; do
    case $v in base) B=$K; G=generated;; nowait|cg) B=$K; G=/tmp/q-$v;; s3) B=$S; G=.devbin/s3/generated;; s3cg) B=$S; G=/tmp/q3-cg;; esac
    timeout 100 $B bench-prefill --backend cuda --runs 10 --out $G > $E/p-$v-$i.md 2> $E/p-$v-$i.log
    echo -n "prefill $v $i: "; prow $E/p-$v-$i.md
  done
done
tar czf $OUT/ev.tgz -C /tmp ev
