#!/usr/bin/env bash
# One device call: the KV-quant score kernels of this tree against another generated
# directory and binary (BASE_GEN, BASE_BIN; default .devbin/gen-base and
# .devbin/onekernel-base, e.g. the previous commit's), same call: ptxas of both,
# validate of this tree's score kernels on CUDA and Vulkan, then `bench-kvquant --quick`
# (TBQ4, QJL, Polar at L = 65536) on both backends, alternating ROUNDS (default 2) times,
# within BUDGET_S (default 400) seconds. Run on the GPU machine from the repository root
# with .devbin/onekernel (this tree's binary), the base binary and generated directory,
# and .gl carried; writes $OUT/ev.tgz.
set -uo pipefail
BUDGET_S=${BUDGET_S:-400}
source scripts/device-env.sh
ev_start
BASE_GEN=${BASE_GEN:-.devbin/gen-base}; BASE_BIN=${BASE_BIN:-.devbin/onekernel-base}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $log
kvquant_ptxas generated $BASE_GEN > $E/ptxas-kvquant-$gpu.log 2>&1
timeout 120 .devbin/onekernel validate --kernel turbo_score --kernel qjl_score --kernel polar_score --backend all > $E/validate-$gpu.log 2>&1; echo "validate rc $? ($(grep -c ' ok ' $E/validate-$gpu.log) ok)" >> $log
for i in $(seq ${ROUNDS:-2}); do
  [ $(left) -lt 70 ] && break
  timeout 60 .devbin/onekernel bench-kvquant --quick --backend cuda,vulkan > $E/quick-new-$i.log 2>&1; echo "new $i rc $?" >> $log
  timeout 60 $BASE_BIN bench-kvquant --quick --backend cuda,vulkan --out $BASE_GEN > $E/quick-base-$i.log 2>&1; echo "base $i rc $?" >> $log
done
for f in $E/quick-*.log; do echo "== $(basename $f)"; grep -E "^\| (cuda|vulkan) " $f | sort -u; done >> $log
echo "done $(date +%T)" >> $log
