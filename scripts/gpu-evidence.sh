#!/usr/bin/env bash
# The GPU evidence: every check and benchmark that needs an NVIDIA GPU, written as JSON
# (and short console logs) to evidence/<gpu>/, <gpu> being the card's model (h100, h200,
# ...) as nvidia-smi names it. Run from the repository root on a Linux machine with the
# NVIDIA driver (CUDA and NVRTC are loaded at run time) and, for the Vulkan rows, a
# Vulkan loader that finds NVIDIA's driver (set VK_DRIVER_FILES to its ICD file if it
# does not):
#
#   bash scripts/gpu-evidence.sh [PART ...]
#
# PARTs, in order (default: all of them):
#   validate  every kernel, variant and case bitwise against the interpreter (CUDA, Vulkan)
#   fixtures  the decode-attention and KV-quant fixtures of tests/fixtures (CUDA, Vulkan)
#   suites    the integration tests of the GPU launch paths (decode step, timed layers,
#             preludes, CUDA backend, KV-quant formats, register tiles, tensor cores,
#             the hardware exponentials, wide and prefill attention, linear attention,
#             layers, NVFP4, the pair reduction, random differential draws)
#   bench     `onekernel bench` (decode attention over the anchor shapes, with tensor cores)
#   kvquant   `onekernel bench-kvquant` (KV-quant score kernels at L = 16384 and 65536)
#   linear    `onekernel bench-linear` (the gated delta net's decode step) and its ggml-style
#             CUDA anchor (cli/anchors/gdn_ggml.cu, built with nvcc) in the same session
#   anchors   PyTorch SDPA on the same shapes (cli/anchors/sdpa.py; needs torch)
#   decode-tc the tensor-core decode step alone (`bench --tensor-cores 2,det
#             --tensor-cores-only`, the scheduler's chunks and the fixed ones) and PyTorch
#             SDPA in the same part, in decode-tc/ (not in the default list: `bench` and
#             `anchors` cover it; this is the quick comparison)
#   prefill   `onekernel bench-prefill` (causal prefill, exact and fast modes) and PyTorch SDPA's
#             prefill on the same shapes (cli/anchors/sdpa_prefill.py)
#   tiles     `onekernel bench-tiles` (each register-tile operation in a probe kernel)
#   formats   `onekernel bench-formats` (FP8 and mixed-row decode at D 512, NVFP4 GEMV) and
#             the f16 GEMV anchor (cli/anchors/gemv_f16.py, cuBLAS through torch)
#   sanitize  `onekernel validate --backend cuda` under compute-sanitizer's memcheck,
#             racecheck, synccheck and initcheck (SANITIZE_KERNELS: a --kernel list,
#             default every kernel); then the planted out-of-bounds write
#             (tests/tests/planted_oob.rs), which memcheck must report
#   vulkan-gpuav  `onekernel validate --backend vulkan` (every kernel, variant and case)
#             under the Khronos layer's GPU-assisted and synchronization validation, and
#             the layer's planted controls (tests/tests/vulkan_layer_controls.rs); needs
#             the layer (VK_LAYER_PATH to its manifest's directory; not in the default
#             list)
#   sanitize-bench  the benchmarks' launch paths under the same four tools
#             (SANITIZE_TOOLS: a subset), one small shape each: `bench --shape 2x700`
#             (decode attention: paged and contiguous, fast and deterministic, tensor
#             cores with 2 and 3 stages and fixed chunks, the L2 flush), `bench-kvquant
#             --smoke` (all nine score paths at L = 300), `bench-linear --smoke` (B 2) and
#             `bench-formats --smoke` (wide decode at L = 300, a small NVFP4 GEMV), one
#             timed run each
#
# Binaries: ONEKERNEL (an `onekernel` built by `cargo test --workspace --no-run`; by
# default this script builds it with cargo) and TEST_BINS (a directory holding the test
# binaries named as the suites; by default cargo runs them). Test binaries built in
# another directory find this checkout through ONEKERNEL_ROOT, which this script sets.
# EVIDENCE_DIR overrides the output directory. Exits non-zero when a check fails; the
# benchmarks report their figures and fail only when they cannot run.
set -uo pipefail
cd "$(dirname "$0")/.."
export ONEKERNEL_ROOT=$PWD
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[0-9]\+\|A[0-9]\+\|B[0-9]\+\|L[0-9]\+' | head -1 | tr '[:upper:]' '[:lower:]')
out=${EVIDENCE_DIR:-evidence/${gpu:-gpu}}
mkdir -p "$out"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(validate fixtures suites bench kvquant linear tiles formats prefill anchors)
if [ -z "${ONEKERNEL:-}" ]; then
    echo "== building (cargo test --workspace --no-run)"
    cargo test --workspace --locked --no-run || exit 1
    ONEKERNEL=${CARGO_TARGET_DIR:-target}/debug/onekernel
fi
suite() {
    if [ -n "${TEST_BINS:-}" ]; then
        "$TEST_BINS/$1" --nocapture --test-threads 1
    else
        cargo test --locked -p onekernel-tests --test "$1" -- --nocapture --test-threads 1
    fi
}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/device.txt"
status=0
for part in "${parts[@]}"; do
    echo "== $part $(date +%T)"
    case $part in
        validate) "$ONEKERNEL" validate --backend cuda,vulkan --evidence "$out" > "$out/validate.log" 2>&1 || status=1
                  grep -c ' ok ' "$out/validate.log"; grep -v ' ok ' "$out/validate.log" | tail -n 5 ;;
        fixtures) "$ONEKERNEL" fixture tests/fixtures/*/*.json --backend cuda,vulkan --evidence "$out" > "$out/fixtures.log" 2>&1 || status=1
                  tail -n 3 "$out/fixtures.log" ;;
        suites)   for t in decode_step timed_layers prelude cuda_backend kvquant_formats tiles fast_exp_on_vulkan attention_tensor_cores attention_prefill_tensor_cores attention_wide attention_prefill linear_attention layers nvfp4 argmax differential; do
                      echo "-- $t"; suite "$t" 2>&1 | grep -E "^test |test result|panicked|SKIP" || status=1
                  done > "$out/suites.log" 2>&1
                  grep -E "^-- |test result|panicked" "$out/suites.log"; grep -q "panicked\|FAILED" "$out/suites.log" && status=1 ;;
        bench)    "$ONEKERNEL" bench --backend cuda,vulkan --tensor-cores 2,3,det --evidence "$out" > "$out/bench.md" 2> "$out/bench.log" || status=1
                  tail -n 2 "$out/bench.log" ;;
        kvquant)  "$ONEKERNEL" bench-kvquant --backend cuda,vulkan --evidence "$out" > "$out/bench-kvquant.md" 2> "$out/bench-kvquant.log" || status=1
                  tail -n 2 "$out/bench-kvquant.log" ;;
        linear)   "$ONEKERNEL" bench-linear --backend cuda,vulkan --evidence "$out" > "$out/bench-linear.md" 2> "$out/bench-linear.log" || status=1
                  tail -n 8 "$out/bench-linear.md"
                  anchor=$(mktemp -d)/gdn_ggml
                  nvcc -O3 -arch=native -o "$anchor" cli/anchors/gdn_ggml.cu > "$out/bench-gdn-ggml.log" 2>&1 \
                      && "$anchor" 50 > "$out/bench-gdn-ggml.json" 2>> "$out/bench-gdn-ggml.log" || status=1
                  grep -o '"form": "[a-z_]*", "n_seqs": [0-9]*, "n_heads": [0-9]*, "n_k_heads": [0-9]*\|"max_abs[^,]*\|"per_layer": {[^}]*}' "$out/bench-gdn-ggml.json" | paste - - - ;;
        sanitize) kernels=()
                  for k in ${SANITIZE_KERNELS:-}; do kernels+=(--kernel "$k"); done
                  for tool in memcheck racecheck synccheck initcheck; do
                      compute-sanitizer --tool "$tool" --error-exitcode 9 --log-file "$out/sanitize-$tool.log" \
                          "$ONEKERNEL" validate --backend cuda "${kernels[@]}" > "$out/sanitize-$tool.out" 2>&1 || status=1
                      echo "$tool: $(grep -c ' ok ' "$out/sanitize-$tool.out") verdicts ok; $(tail -n 1 "$out/sanitize-$tool.log")"
                  done
                  if [ -n "${TEST_BINS:-}" ] && [ ! -x "$TEST_BINS/planted_oob" ]; then
                      echo "no $TEST_BINS/planted_oob: the planted control cannot run"; status=1
                  elif ONEKERNEL_PLANTED_OOB=1 compute-sanitizer --tool memcheck --error-exitcode 9 --log-file "$out/sanitize-planted.log" \
                         "$TEST_BINS/planted_oob" --test-threads 1 > /dev/null 2>&1; then
                      echo "planted out-of-bounds write NOT reported"; status=1
                  else
                      echo "planted out-of-bounds write reported: $(grep -m1 -o 'Invalid __global__ write[^\n]*' "$out/sanitize-planted.log")"
                  fi ;;
        sanitize-bench)
                  for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck initcheck}; do
                      for b in "bench --shape 2x700 --tensor-cores 2,3,det" "bench-kvquant --smoke" "bench-linear --smoke" "bench-formats --smoke"; do
                          name=${b%% *}
                          # shellcheck disable=SC2086 # $b is the command's words
                          compute-sanitizer --tool "$tool" --error-exitcode 9 --log-file "$out/sanitize-$tool-$name.log" \
                              "$ONEKERNEL" $b --backend cuda --runs 1 > "$out/sanitize-$tool-$name.out" 2>&1 || status=1
                          echo "$tool $name: $(tail -n 1 "$out/sanitize-$tool-$name.log")"
                      done
                  done ;;
        vulkan-gpuav)
                  # Every kernel, variant and case on NVIDIA's Vulkan under the Khronos layer's
                  # GPU-assisted (bounds of every storage-buffer access) and synchronization
                  # validation; CI's lavapipe pass takes each kernel's first variant only.
                  # The layer must be found (VK_LAYER_PATH); then the planted controls.
                  mkdir -p "$out/vulkan-gpuav"
                  ONEKERNEL_VK_VALIDATION_FEATURES=sync,gpu "$ONEKERNEL" validate --backend vulkan --evidence "$out/vulkan-gpuav" \
                      > "$out/vulkan-gpuav/validate.log" 2>&1 || status=1
                  if ! grep -q "validation Khronos validation layer: .*GPU-assisted" "$out/vulkan-gpuav/validate.log"; then
                      echo "GPU-assisted validation was not on: the Khronos layer was not found (VK_LAYER_PATH)"; status=1
                  fi
                  echo "$(grep -c ' ok ' "$out/vulkan-gpuav/validate.log") verdicts ok, $(grep -c ' SKIPPED ' "$out/vulkan-gpuav/validate.log") skipped"
                  grep -v ' ok \| SKIPPED ' "$out/vulkan-gpuav/validate.log" | tail -n 5
                  suite vulkan_layer_controls > "$out/vulkan-gpuav/controls.log" 2>&1 || status=1
                  grep -E "caught|SKIPPED|test result|panicked" "$out/vulkan-gpuav/controls.log" ;;
        tiles)    "$ONEKERNEL" bench-tiles --backend cuda,vulkan --evidence "$out" > "$out/bench-tiles.log" 2>&1 || status=1
                  grep -v '^cuda:\|^vulkan:' "$out/bench-tiles.log" | tail -n 4 ;;
        formats)  "$ONEKERNEL" bench-formats --backend cuda,vulkan --evidence "$out" > "$out/bench-formats.md" 2> "$out/bench-formats.log" || status=1
                  python3 cli/anchors/gemv_f16.py "$out/bench-gemv-f16.json" > "$out/bench-gemv-f16.log" 2>&1 || status=1
                  cat "$out/bench-formats.md" "$out/bench-gemv-f16.log" ;;
        prefill)  "$ONEKERNEL" bench-prefill --backend cuda,vulkan --runs 20 --evidence "$out" > "$out/bench-prefill.md" 2> "$out/bench-prefill.log" || status=1
                  python3 cli/anchors/sdpa_prefill.py "$out/bench-sdpa-prefill.json" > "$out/bench-sdpa-prefill.log" 2>&1 || status=1
                  cat "$out/bench-prefill.md" "$out/bench-sdpa-prefill.log" ;;
        anchors)  python3 cli/anchors/sdpa.py "$out/bench-sdpa.json" > "$out/bench-sdpa.log" 2>&1 || status=1
                  tail -n 3 "$out/bench-sdpa.log" ;;
        decode-tc) mkdir -p "$out/decode-tc"
                  "$ONEKERNEL" bench --backend cuda,vulkan --tensor-cores 2,det --tensor-cores-only --runs 20 --evidence "$out/decode-tc" \
                      > "$out/decode-tc/bench.md" 2> "$out/decode-tc/bench.log" || status=1
                  python3 cli/anchors/sdpa.py "$out/decode-tc/bench-sdpa.json" > "$out/decode-tc/bench-sdpa.log" 2>&1 || status=1
                  cat "$out/decode-tc/bench.md"; tail -n 3 "$out/decode-tc/bench-sdpa.log" ;;
        *) echo "unknown part \`$part\`; use validate fixtures suites bench kvquant linear tiles formats prefill anchors decode-tc sanitize sanitize-bench vulkan-gpuav"; exit 2 ;;
    esac
done
echo "== done $(date +%T), evidence in $out"
exit $status
