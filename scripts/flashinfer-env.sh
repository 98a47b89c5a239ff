# Sourced on the GPU machine by scripts/gpu-bench-evidence.sh (PART=flashinfer): FlashInfer
# 0.2.14 as ANCHORS.md measured it, from its PyPI source distribution carried in .fi/
# (never committed; fetch it with `python3 -m pip download --no-deps --no-binary=:all:
# flashinfer-python==0.2.14`, or from PyPI's files, into .fi/). The package runs from the
# unpacked tree: its JIT looks for headers and sources under flashinfer/data/, which an
# installed wheel has and the source tree does not, so links stand in for them. Kernels
# are compiled for sm_90 only, in a workspace under /tmp.
FI_TGZ=${FI_TGZ:-$(ls .fi/flashinfer_python-*.tar.gz | head -1)}
FI_ROOT=/tmp/fi/$(basename "$FI_TGZ" .tar.gz)
mkdir -p /tmp/fi && tar xzf "$FI_TGZ" -C /tmp/fi
mkdir -p "$FI_ROOT/flashinfer/data"
for d in include csrc tvm_binding; do ln -sfn "$FI_ROOT/$d" "$FI_ROOT/flashinfer/data/$d"; done
for d in cutlass spdlog; do ln -sfn "$FI_ROOT/3rdparty/$d" "$FI_ROOT/flashinfer/data/$d"; done
export PYTHONPATH=$FI_ROOT:${PYTHONPATH:-}
export TORCH_CUDA_ARCH_LIST=9.0 FLASHINFER_CUDA_ARCH_LIST=9.0 FLASHINFER_WORKSPACE_BASE=/tmp/fiws MAX_JOBS=16
echo "flashinfer from $FI_TGZ at $FI_ROOT"
