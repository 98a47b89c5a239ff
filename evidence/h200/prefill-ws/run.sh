# H200 call: warp-specialized attn_prefill_mma as a timing probe (probe.py: a copying
# warpgroup, two, three or four K/V buffers on mbarriers, setmaxnreg budgets) against
# the kernel of this tree in the same binary, alternated twice on CUDA; `validate` of
# the probes on CUDA (their results against the float64 reference), compute-sanitizer's
# racecheck over one probe's verdicts, SDPA in the same call. Every command has a
# timeout (a probe that deadlocks on its barriers would otherwise hold the call).
. evidence/h200/device_prelude.sh
E=$OUT/ev; mkdir -p $E
python3 evidence/h200/prefill-ws/probe.py generated /tmp/pw
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for p in ws ws2 ws4; do
  timeout 45 $K validate --backend cuda --kernel attn_prefill_mma --out /tmp/pw-$p > $E/validate-$p.log 2>&1; r=$?
  echo "validate $p (rc $r): $(grep -c ' ok ' $E/validate-$p.log) ok, $(grep -ci skipped $E/validate-$p.log) skipped, $(grep -ci mismatch $E/validate-$p.log) mismatch"
done
for i in 1 2; do
  timeout 70 $K bench-prefill --backend cuda --runs 10 > $E/pkernel-$i.md 2>&1; echo "kernel-$i $(prow $E/pkernel-$i.md)"
  for p in ws ws2 ws4; do
    grep -q "ok" $E/validate-$p.log || continue
    timeout 70 $K bench-prefill --backend cuda --runs 10 --out /tmp/pw-$p > $E/p$p-$i.md 2>&1; echo "$p-$i (rc $?) $(prow $E/p$p-$i.md)"
  done
done
timeout 150 python3 cli/anchors/sdpa_prefill.py $E/sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "^sdpa_(cudnn|flash) " $E/bench-sdpa-prefill.log
timeout 100 compute-sanitizer --tool racecheck $K validate --backend cuda --kernel attn_prefill_mma --variant "paged = true, kv64 = true" --cases 1 --out /tmp/pw-ws > $E/racecheck-ws.log 2>&1; echo "racecheck (rc $?): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $E/racecheck-ws.log | tail -1)"
