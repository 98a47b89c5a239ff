#!/usr/bin/env bash
# Every test: formatting, clippy with warnings as errors, then the whole workspace's test
# suite (unit, integration, trybuild diagnostics, the regeneration check, the CLI, Vulkan
# on lavapipe; CUDA tests print SKIPPED without an NVIDIA GPU). Installs (or checks) the
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
echo "== cargo test --workspace"
# --show-output makes skips visible (CUDA / NVIDIA tests on a machine without a GPU) and
# prints the measured figures (ULP bounds, fixture NMSE) into the log.
cargo test --workspace --locked -- --show-output 2>&1
echo "== validate on lavapipe with GPU-assisted and synchronization validation"
# The Khronos layer's GPU-assisted validation instruments every buffer access (bounds of
# descriptor-indexed storage buffers), and lavapipe compiles each instrumented pipeline
# slowly (about 27 minutes for this pass on a fresh 2-core machine, 17 s with the shader
# caches in ~/.cache warm), so it takes each kernel's first validation case over every
# variant (the full case list runs above under synchronization validation). Any layer
# message fails the launch.
ONEKERNEL_VK_VALIDATION_FEATURES=sync,gpu cargo run --locked --profile test -q -p onekernel-cli -- validate --backend vulkan --cases 1 2>&1
