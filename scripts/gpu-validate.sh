#!/usr/bin/env bash
# Validates every kernel on the GPU machine's CUDA and NVIDIA-Vulkan backends against the
# reference interpreter and writes evidence JSON. Run there from the repository root with
# the `onekernel` binary built on the development machine (.devbin/onekernel, stripped)
# and the Vulkan loader packages in .gl/ (see the device tool's README):
#
#   bash scripts/gpu-validate.sh .devbin/onekernel "$OUT/evidence"
set -uo pipefail
bin=${1:-.devbin/onekernel}
evidence=${2:-generated/evidence}
if ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
"$bin" validate --backend all --evidence "$evidence"
