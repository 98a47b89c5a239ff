#!/usr/bin/env bash
# NVIDIA Vulkan machine code of the unstaged deterministic chunk kernel (paged) for the
# base (.devbin/onekernel with .devbin/gen-head) and a candidate (.devbin/new/onekernel
# with .devbin/new/gen), from the driver's shader disk cache (scripts/vk_sass.py).
# Carry .devbin/onekernel, .devbin/gen-head, .devbin/new and .gl; writes $OUT/ev.tgz.
# Used in the twenty-third session for the split q·k form
# (docs/experiments/vulkan-split-qk-unlooped.patch).
set -uo pipefail
BUDGET_S=${BUDGET_S:-300}
source scripts/device-env.sh
ev_start
VARIANT="paged = true, deterministic = true, async_k = false, long_pairs = false"
for c in "base .devbin/onekernel .devbin/gen-head" "new .devbin/new/onekernel .devbin/new/gen"; do set -- $c
  rm -rf /tmp/glc-$1; mkdir -p /tmp/glc-$1
  __GL_SHADER_DISK_CACHE=1 __GL_SHADER_DISK_CACHE_PATH=/tmp/glc-$1 __GL_SHADER_DISK_CACHE_SKIP_CLEANUP=1 \
    timeout 120 $2 validate --kernel attn_decode_chunk --variant "$VARIANT" --backend vulkan --out $3 > $E/validate-$1.log 2>&1
  echo "== $1 validate rc $? ok $(grep -c ' ok ' $E/validate-$1.log)" >> $log
  python3 scripts/vk_sass.py /tmp/glc-$1 $E/sass-$1 SM90 >> $log 2>&1
done
echo "done $(date +%T)" >> $log
