#!/usr/bin/env bash
# The command that produced this directory (GPU machine, from the repository root, with
# the Vulkan loader packages in .gl/, Debian's vulkan-validationlayers 1.3.239 package in
# .gl/layer/, and stripped, gzipped `onekernel` and `vulkan_layer_controls` test binaries
# of this commit in .devbin/new/). The layer is unpacked outside / and found through
# VK_LAYER_PATH; scripts/gpu-evidence.sh fails the part unless the device line shows it on.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
mkdir -p /tmp/vvl /tmp/bin
dpkg -x .gl/layer/vulkan-validationlayers_1.3.239.0-2_amd64.deb /tmp/vvl
for b in .devbin/new/*.gz; do gunzip -c "$b" > "/tmp/bin/$(basename "$b" .gz)"; done; chmod +x /tmp/bin/*
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
export VK_LAYER_PATH=/tmp/vvl/usr/share/vulkan/explicit_layer.d
export LD_LIBRARY_PATH=/tmp/vvl/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ONEKERNEL=/tmp/bin/onekernel TEST_BINS=/tmp/bin EVIDENCE_DIR=${1:-evidence/h200} bash scripts/gpu-evidence.sh vulkan-gpuav
