# What the device calls' run scripts share, sourced from the repository root: the Vulkan
# loader from the carried .gl/ packages (NVIDIA's driver as its ICD), CUDA's tools on the
# path, the working tree's binary (.devbin/new) as $K in /tmp/b, an empty evidence
# folder $E, and the one-line summaries of a decode (`drow`) and prefill (`prow`) table.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
drow() { grep -E "^\| [0-9]+ × [0-9]+ \| [0-9.]+ µs" $1 | awk -F'|' '{printf "%s:%s ", $2, $3}'; echo; }
prow() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s%s:%s  ", $2, $3, $6}'; echo; }
