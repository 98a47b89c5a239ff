#!/usr/bin/env bash
# The main job: regenerate every kernel for every backend (CUDA, GLSL -> SPIR-V validated
# with spirv-val and cross-checked by reflection, MSL), and check that generated/ is up to
# date. Installs (or checks) the system packages it needs first.
#
# It builds with the dev profile, whose dependencies (shaderc, SPIRV-Tools) are optimized
# and shared with the test suite's build: the 15-minute source build happens only once.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_system_packages
echo "== building"
cargo build --locked -p onekernel-codegen 2>&1
echo "== onekernel gen"
./target/debug/onekernel gen
echo "== onekernel check"
./target/debug/onekernel check
