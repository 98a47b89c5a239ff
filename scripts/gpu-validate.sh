#!/usr/bin/env bash
# The GPU machine's evidence run: every kernel against the reference interpreter on
# CUDA and NVIDIA Vulkan, the attention fixtures, and decode attention's full
# determinism grid. Run there from the repository root with the `onekernel` binary built
# on the development machine (`cargo test --workspace --no-run`, i.e. the optimized test
# profile; stripped to .devbin/onekernel), the Vulkan loader packages in .gl/ (see the
# device tool's README) and, for the fixtures, a copy of ../shared/fixtures/attention and
# ../shared/fixtures/eliza in .fx/ (the device gets the working tree only; .fx is never
# committed):
#
#   bash scripts/gpu-validate.sh .devbin/onekernel "$OUT/evidence" [.fx]
#
# ONEKERNEL_SKIP_GRID=1 leaves out the 216-point determinism grid (about 5 minutes);
# ONEKERNEL_SKIP_KVQUANT_BENCH=1 the KV-quant bandwidth benchmark (about 1 minute);
# ONEKERNEL_SKIP_ATTENTION_BENCH=1 the decode-attention benchmark and PyTorch SDPA.
set -uo pipefail
bin=${1:-.devbin/onekernel}
evidence=${2:-generated/evidence}
fixtures=${3:-}
source scripts/device-env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
status=0
if command -v nvcc >/dev/null; then
    echo "== compiler resource report (ptxas -v, sm_90) of the hot kernels"
    for k in attn_decode_chunk attn_decode_combine turbo_score qjl_score polar_score; do
        echo "-- $k"
        nvcc -arch=sm_90 -cubin -o "/tmp/$k.cubin" --resource-usage "generated/cuda/$k.cu" 2>&1 | grep -E "Function properties|registers|spill|smem" | sed 's/^ptxas info *: //'
    done > "$evidence/ptxas-resource-usage.log" 2>&1
    tail -n 12 "$evidence/ptxas-resource-usage.log"
fi
echo "== validate"
"$bin" validate --backend all --evidence "$evidence" || status=1
if [ -n "$fixtures" ]; then
    echo "== fixtures (decode attention, elizaOS KV quant)"
    "$bin" fixture "$fixtures"/*.json --backend cuda,vulkan --evidence "$evidence" || status=1
fi
if [ -z "${ONEKERNEL_SKIP_KVQUANT_BENCH:-}" ]; then
    echo "== KV-quant score bandwidth"
    "$bin" bench-kvquant --backend cuda,vulkan --evidence "$evidence" || status=1
fi
if [ -z "${ONEKERNEL_SKIP_ATTENTION_BENCH:-}" ]; then
    echo "== decode-attention benchmark (ANCHORS.md shapes) and PyTorch SDPA in the same session"
    "$bin" bench --backend cuda,vulkan --evidence "$evidence" || status=1
    python3 scripts/bench_sdpa.py "$evidence/bench-sdpa.json" || status=1
fi
if [ -n "${ONEKERNEL_SKIP_GRID:-}" ]; then
    echo "== attention determinism grid skipped (ONEKERNEL_SKIP_GRID)"
    exit $status
fi
echo "== attention determinism grid (full), CUDA and Vulkan side by side"
"$bin" attention-grid --grid full --backend cuda --evidence "$evidence" > "$evidence/attention-grid-cuda.log" 2>&1 &
cuda_pid=$!
"$bin" attention-grid --grid full --backend vulkan --evidence "$evidence" > "$evidence/attention-grid-vulkan.log" 2>&1 &
vulkan_pid=$!
wait $cuda_pid || status=1
wait $vulkan_pid || status=1
tail -n 3 "$evidence"/attention-grid-*.log
exit $status
