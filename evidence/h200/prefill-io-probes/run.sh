# H200 calls (call-1: the default VARIANTS; call-2: VARIANTS="base v2q v2o v2 io16"), on the tree of 1120f79 (its generated/ and binary): timing probes of `attn_prefill_mma` (probes.py: hand-edited copies of
# generated/ with half-width Q reads and output stores, and two bounds), each against
# the tree's generated/ with the same binary (.devbin/new), alternated twice on CUDA.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel; VARIANTS=${VARIANTS:-base q16 o16 io16 nobar noexp}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-io-probes/probes.py generated /tmp/pr > $E/probes.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s:%s  ", $3, $6}'; echo; }
for i in 1 2; do
  for v in $VARIANTS; do
    d=/tmp/pr-$v; [ $v = base ] && d=generated
    timeout 150 $K bench-prefill --backend cuda --runs 10 --out $d > $E/$v-$i.md 2> $E/$v-$i.log; echo -n "$v $i: "; row $E/$v-$i.md
  done
done
tar czf $OUT/ev.tgz -C /tmp ev
