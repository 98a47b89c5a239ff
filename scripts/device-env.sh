# Sourced by the GPU-machine scripts: the Vulkan loader from the carried .gl packages
# (where the machine lacks one), NVIDIA's Vulkan driver, CUDA's tools and libraries on
# the paths, `left`, the seconds left of BUDGET_S (default 545, under the device
# tool's 600 s limit) since this file was sourced, and `ev_start` / `finish` for a
# call's evidence directory.
if ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done
    ldconfig
fi
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json}
export PATH=/usr/local/cuda/bin:$PATH
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/nvidia/lib64; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d:${LD_LIBRARY_PATH:-}"
done
ok_env_t0=$(date +%s)
left() { echo $(( ${BUDGET_S:-545} - ($(date +%s) - ok_env_t0) )); }
# The card's tag for evidence file names (h100, h200; the device tool may give either for
# the same request), from the driver's name of GPU 0.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -o 'H[0-9]\+' | head -1 | tr H h)
gpu=${gpu:-gpu}
# The call's evidence: $E (= $OUT/ev) with its console $log; from `ev_start` on, any exit
# runs `finish`, which packs $E into $OUT/ev.tgz (the device tool returns at most eight
# files) once and exits 0, so a failing step never loses what was written.
ev_start() { E=$OUT/ev; mkdir -p "$E"; log=$E/run-$gpu.log; trap finish EXIT; }
finish() { trap - EXIT; cd "$OUT" && tar czf ev.tgz ev && rm -rf ev; exit 0; }
# nvcc's resource report (registers, spills, shared memory) of the KV-quant score kernels
# in each generated directory given, to stdout (the A/B scripts' ptxas log).
kvquant_ptxas() {
  for g in "$@"; do
    for k in turbo_score qjl_score polar_score; do
      echo "-- $g/cuda/$k.cu"; nvcc -arch=sm_90 -cubin -o /tmp/k.cubin --resource-usage $g/cuda/$k.cu 2>&1 | grep -E "Function properties|registers|spill" | sed 's/^ptxas info *: //'
    done
  done
}
