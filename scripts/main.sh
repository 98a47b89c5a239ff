#!/usr/bin/env bash
# The main job: regenerate every kernel for every backend (CUDA, GLSL -> SPIR-V validated
# with spirv-val and cross-checked by reflection, MSL), check that generated/ is up to
# date, and validate every kernel, variant and case bitwise against the reference
# interpreter on the backends present (Vulkan: lavapipe or a GPU; CUDA: an NVIDIA GPU;
# msl-emu: the generated MSL compiled as C++ and run on the CPU),
# writing evidence JSON to target/evidence. Installs (or checks) the system packages
# it needs first.
#
# It builds exactly what the test suite builds (same command, so the same feature
# resolution and profile): shaderc and SPIRV-Tools are compiled from source once, for
# both commands.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/deps.sh
ensure_system_packages
echo "== building"
cargo test --workspace --locked --no-run 2>&1
onekernel="${CARGO_TARGET_DIR:-target}/debug/onekernel"
echo "== onekernel gen"
"$onekernel" gen
echo "== onekernel check"
"$onekernel" check
echo "== onekernel validate --backend all,msl-emu"
"$onekernel" validate --backend all,msl-emu --evidence "${CARGO_TARGET_DIR:-target}/evidence"
