#!/usr/bin/env bash
# A/B of `docs/experiments/l2-prefetch-256b.patch` (16-byte cp.async with the
# `.L2::256B` prefetch hint) on CUDA, two alternating rounds, the paged fast (exact) and
# tensor-core steps at 16 × 32768, 128 × 8192 and 1 × 32768. Made on the development
# machine: the base binary in .devbin/onekernel, the candidate's generated directory in
# .devbin/gen-l2 (`git apply` the patch, build, `onekernel gen --out .devbin/gen-l2`,
# revert); both sides run by the base binary, each reading its own generated directory.
source scripts/device-env.sh
for r in 1 2; do
for v in base l2; do
  if [ $v = base ]; then out=generated; else out=.devbin/gen-l2; fi
  echo "== $v round $r"
  .devbin/onekernel bench --backend cuda --out $out --shape 16x32768 --shape 128x8192 --shape 1x32768 --tensor-cores 2 2>&1 | grep -E "paged +(fast|tensor_cores_2stage) +step"
done; done
