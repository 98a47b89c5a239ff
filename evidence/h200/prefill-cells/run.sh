# H200 call: the bounds of probes.py against the tree's generated/ (f91773a's kernels),
# the same binary (.devbin/new), alternated twice on CUDA.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/ev; mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-cells/probes.py generated /tmp/pc > $E/probes.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s:%s  ", $3, $6}'; echo; }
for i in 1 2; do
  for v in base nolookup page16; do
    d=/tmp/pc-$v; [ $v = base ] && d=generated
    timeout 150 $K bench-prefill --backend cuda --runs 10 --out $d > $E/$v-$i.md 2> $E/$v-$i.log; echo -n "$v $i: "; row $E/$v-$i.md
  done
done
tar czf $OUT/ev.tgz -C /tmp ev
