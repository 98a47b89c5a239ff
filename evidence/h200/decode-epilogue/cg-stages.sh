# Three buffers with copies that bypass L1 (cg.py edits a copy of generated/): with
# three buffers two workgroups fill 225.5 KiB of shared memory, which leaves L1 at most
# 30 KiB for the `.ca` copies in flight. CUDA, alternated twice, one call (H200); the binary
# and generated/ of the working tree (.devbin/new). Lands in ev/ as a tarball.
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/onekernel
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/decode-epilogue/cg.py generated /tmp/cg
b() { local name=$1; shift; $K bench --backend cuda --tensor-cores-only --runs 20 "$@" > $E/$name.md 2> $E/$name.log; echo "$name: $(grep -E '^\| [0-9]' $E/$name.md | cut -d'|' -f2,3 | tr '\n' ' ')"; }
S="--shape 16x4096 --shape 16x32768 --shape 1x32768"
for i in 1 2; do
  b ca-$i --tensor-cores 2,3 $S
  b cg-$i --tensor-cores 2,3 $S --out /tmp/cg
  b cg-whole-16x4096-$i --tensor-cores 2,3 --tc-chunk 4096 --shape 16x4096 --out /tmp/cg
done
tar czf $OUT/ev.tgz -C /tmp ev
