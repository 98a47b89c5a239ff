#!/usr/bin/env bash
# One device call of evidence after a runtime or benchmark-method change (kernels
# unchanged): PART=checks (default) runs validate (every kernel, CUDA and NVIDIA Vulkan;
# stops here on a mismatch), the fixtures, the GPU test suites of the runtime's launch
# paths (l2_flush, decode_step, timed_layers, cuda_backend, kvquant_formats,
# attention_tensor_cores) and `onekernel bench` (BENCH_ARGS: more of its options, e.g.
# --tensor-cores 2,det; SKIP_BENCH=1 leaves it out);
# PART=kvquant runs `bench-kvquant` (both lengths) and PyTorch SDPA (scripts/bench_sdpa.py,
# with and without the L2 flush; SKIP_SDPA=1 leaves it out); PART=flashinfer runs FlashInfer's paged decode
# (scripts/bench_flashinfer.py; its PyPI source distribution carried in .fi/ and unpacked
# by scripts/flashinfer-env.sh) and then `onekernel bench --backend cuda`, so the ratio is
# measured in one call (BENCH_ARGS: more `onekernel bench` options, e.g. --tensor-cores 2).
# A clock log runs throughout. Run on the GPU machine from
# the repository root with the stripped `onekernel` in .devbin/, test binaries in
# .devbin/t/, the Vulkan loader packages in .gl/ and the fixtures in .fx/
# (scripts/gpu-validate.sh says how to make them); writes $OUT/ev.tgz. SKIP_VALIDATE=1 skips
# validate (a re-run whose kernels and launch path a previous call validated).
set -uo pipefail
BUDGET_S=${BUDGET_S:-560}
source scripts/device-env.sh
ev_start
PART=${PART:-checks}
mkdir -p /tmp/fx ../shared/fixtures; cp .fx/*/*.json /tmp/fx/; cp -r .fx/* ../shared/fixtures/
# The test binaries read generated/ and ../shared from their build paths (/work/main).
if [ "$PWD" != /work/main ]; then mkdir -p /work/main /work/shared; ln -sfn "$PWD/generated" /work/main/generated; ln -sfn "$PWD/../shared/fixtures" /work/shared/fixtures; fi
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $log
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 500 > $E/clocks-$PART-$gpu.csv &
if [ "$PART" = checks ]; then
  if [ "${SKIP_VALIDATE:-0}" != 1 ]; then
  echo "== validate $(date +%T)" >> $log
  timeout 200 .devbin/onekernel validate --backend all --evidence $E > $E/validate-$gpu.log 2>&1; rc=$?; echo "validate rc $rc" >> $log
  grep -c ' ok ' $E/validate-$gpu.log >> $log; grep -v ' ok ' $E/validate-$gpu.log | grep -v SKIPPED | tail -5 >> $log
  [ $rc -ne 0 ] && finish
  fi
  echo "== fixtures $(date +%T)" >> $log
  timeout 60 .devbin/onekernel fixture /tmp/fx/*.json --backend cuda,vulkan --evidence $E > $E/fixtures-$gpu.log 2>&1; echo "fixtures rc $?" >> $log
  echo "== test suites $(date +%T)" >> $log
  for t in l2_flush decode_step timed_layers cuda_backend kvquant_formats attention_tensor_cores; do echo "== $t"; timeout 60 .devbin/t/$t --nocapture --test-threads 1 2>&1 | grep -E "^test |test result|panicked|SKIP|: "; done > $E/test-suites-$gpu.log 2>&1
  grep -E "^== |test result" $E/test-suites-$gpu.log >> $log
  if [ "${SKIP_BENCH:-0}" != 1 ]; then
  echo "== bench $(date +%T)" >> $log
  timeout $(( $(left) - 10 )) .devbin/onekernel bench --backend cuda,vulkan ${BENCH_ARGS:-} --evidence $E > $E/bench-$gpu.log 2>&1; echo "bench rc $?" >> $log
  fi
elif [ "$PART" = flashinfer ]; then
  echo "== flashinfer $(date +%T)" >> $log
  source scripts/flashinfer-env.sh >> $log 2>&1
  timeout $(( $(left) - 130 )) python3 scripts/bench_flashinfer.py $E/bench-flashinfer-$gpu.json > $E/bench-flashinfer-$gpu.log 2>&1; echo "flashinfer rc $?" >> $log
  tail -3 $E/bench-flashinfer-$gpu.log >> $log
  echo "== bench cuda $(date +%T)" >> $log
  timeout $(( $(left) - 10 )) .devbin/onekernel bench --backend cuda ${BENCH_ARGS:-} --evidence $E > $E/bench-cuda-$gpu.log 2>&1; echo "bench rc $?" >> $log
else
  echo "== bench-kvquant $(date +%T)" >> $log
  timeout $(( $(left) - 10 )) .devbin/onekernel bench-kvquant --backend cuda,vulkan --evidence $E > $E/bench-kvquant-$gpu.log 2>&1; echo "bench-kvquant rc $?" >> $log
  if [ "${SKIP_SDPA:-0}" != 1 ]; then
  echo "== sdpa $(date +%T)" >> $log
  timeout $(( $(left) - 10 )) python3 scripts/bench_sdpa.py $E/bench-sdpa-$gpu.json > $E/bench-sdpa-$gpu.log 2>&1; echo "sdpa rc $?" >> $log
  fi
fi
echo "done $(date +%T)" >> $log
