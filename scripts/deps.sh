# Sourced by the scripts: checks for the system packages onekernel's build and tests
# need and installs the missing ones with apt-get (as root, or through sudo).
#
# Needed: cmake, ninja and g++ (and python3, which the machine already has) for the
# vendored source build of shaderc (glslang and SPIRV-Tools inside it); clang for the MSL and CUDA parse
# checks of the test suite; the Vulkan loader, Mesa's lavapipe driver and the Khronos
# validation layer for the Vulkan execution tests.
ONEKERNEL_APT_PACKAGES=(g++ cmake ninja-build clang libvulkan1 mesa-vulkan-drivers vulkan-validationlayers)

ensure_system_packages() {
    local missing=()
    for p in "${ONEKERNEL_APT_PACKAGES[@]}"; do
        dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "== system packages present: ${ONEKERNEL_APT_PACKAGES[*]}"
        return
    fi
    echo "== installing system packages: ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
}
