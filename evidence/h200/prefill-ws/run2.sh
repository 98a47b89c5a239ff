# H200 calls 2 and 4: the probe's forms (probe.py; the list as the argument, call 2 the
# default, call 4 `run2.sh "wsn wsb wsb1"`) against the kernel of this tree in the same
# binary, alternated twice on CUDA, each validated on CUDA first (a form with a mismatch
# or a timeout is not timed). SDPA ran in run.sh's call.
. evidence/h200/device_prelude.sh
E=$OUT/ev; mkdir -p $E
python3 evidence/h200/prefill-ws/probe.py generated /tmp/pw
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
P=${1:-"ws ws2 wsp wsn wsn4"}
for p in $P; do
  timeout 45 $K validate --backend cuda --kernel attn_prefill_mma --out /tmp/pw-$p > $E/validate-$p.log 2>&1; r=$?
  echo "validate $p (rc $r): $(grep -c ' ok ' $E/validate-$p.log) ok, $(grep -ci mismatch $E/validate-$p.log) mismatch"
  [ $r = 0 ] || P=$(echo $P | sed "s/\b$p\b//")
done
for i in 1 2; do
  timeout 70 $K bench-prefill --backend cuda --runs 10 > $E/pkernel-$i.md 2>&1; echo "kernel-$i $(prow $E/pkernel-$i.md)"
  for p in $P; do
    timeout 70 $K bench-prefill --backend cuda --runs 10 --out /tmp/pw-$p > $E/p$p-$i.md 2>&1; echo "$p-$i (rc $?) $(prow $E/p$p-$i.md)"
  done
done
