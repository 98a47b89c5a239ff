#!/usr/bin/env bash
# Every test: formatting, clippy with warnings as errors, then the whole workspace's test
# suite (unit, integration, trybuild diagnostics, the regeneration check, the CLI, Vulkan
# on lavapipe; CUDA tests print SKIPPED without an NVIDIA GPU), then validate under
# GPU-assisted validation. Installs (or checks) the
# system packages it needs first, so it works on a fresh Debian/Ubuntu machine with Rust.
# Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_system_packages
echo "== cargo fmt --check"
cargo fmt --all --check
echo "== cargo clippy -D warnings"
# The test profile: the same build of shaderc as the tests below, not a second one.
cargo clippy --workspace --all-targets --locked --profile test -- -D warnings 2>&1
if cargo nextest --version >/dev/null 2>&1; then
    echo "== cargo nextest run --workspace, then the doc tests"
    # nextest runs every test in its own process and keeps both cores busy across test
    # binaries (cargo test runs one binary at a time: 36 min against 23 min measured on a
    # 2-core machine). Every test's output is printed, so skips and figures stay visible.
    cargo nextest run --workspace --locked --cargo-profile test --no-fail-fast --success-output final --failure-output final 2>&1
    cargo test --workspace --locked --doc 2>&1
else
    echo "== cargo test --workspace (cargo-nextest is not installed)"
    # --show-output makes skips visible (CUDA / NVIDIA tests on a machine without a GPU) and
    # prints the measured figures (ULP bounds, fixture NMSE) into the log.
    cargo test --workspace --locked -- --show-output 2>&1
fi
echo "== validate on lavapipe with GPU-assisted and synchronization validation"
# The Khronos layer's GPU-assisted validation instruments every buffer access (bounds of
# storage-buffer accesses), and lavapipe compiles each instrumented pipeline slowly (its
# coroutine lowering of barriers: three minutes for one decode-attention variant on a
# 2-core machine), so CI takes each kernel's first variant that lavapipe runs, with its
# first case (8–9 minutes with empty shader caches). Every variant and case runs
# under the same layer on NVIDIA's Vulkan (`scripts/gpu-evidence.sh vulkan-gpuav`) and,
# here, under synchronization validation in the suite above. Any layer message fails the
# launch; the header must show the layer on with GPU-assisted validation.
log=$(mktemp)
ONEKERNEL_VK_VALIDATION_FEATURES=sync,gpu cargo run --locked --profile test -q -p onekernel-cli -- \
    validate --backend vulkan --cases 1 --variants 1 2>&1 | tee "$log"
grep -q "validation Khronos validation layer: .*GPU-assisted" "$log" || {
    echo "GPU-assisted validation was not on (see the vulkan: line above)"
    exit 1
}
