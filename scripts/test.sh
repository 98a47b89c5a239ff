#!/usr/bin/env bash
# Runs the full test suite. Installs (or checks) the system packages it needs first, so
# that it works on a fresh Debian/Ubuntu machine with Rust. Used by .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_system_packages
echo "== cargo test --workspace"
# --show-output makes skips visible (CUDA / NVIDIA tests on a machine without a GPU) and
# prints the measured figures (ULP bounds, fixture NMSE) into the log.
cargo test --workspace --locked -- --show-output 2>&1
