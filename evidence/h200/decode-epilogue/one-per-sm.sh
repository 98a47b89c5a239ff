# One workgroup per SM at the one-wave shapes, as cuDNN runs them: each sequence's KV
# head in one chunk (no merge) or in chunks twice the scheduler's, with two or three
# buffers, against the scheduler's choice; CUDA, alternated twice, one call (H200).
# Binary and generated/ of the working tree (.devbin/new). Lands in ev/ as a tarball.
export PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; chmod +x /tmp/b/onekernel
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
b() { local name=$1; shift; $K bench --backend cuda --tensor-cores-only --runs 20 "$@" > $E/$name.md 2> $E/$name.log; echo "$name: $(grep -E '^\| [0-9]' $E/$name.md | cut -d'|' -f2,3 | tr '\n' ' ')"; }
for i in 1 2; do
  b sched-$i --tensor-cores 2 --shape 16x4096 --shape 16x32768 --shape 1x32768
  b whole-16x4096-s3-$i --tensor-cores 2,3 --tc-chunk 4096 --shape 16x4096
  b whole-16x32768-s3-$i --tensor-cores 2,3 --tc-chunk 32768 --shape 16x32768
  b c2048-1x32768-s3-$i --tensor-cores 2,3 --tc-chunk 2048 --shape 1x32768
done
tar czf $OUT/ev.tgz -C /tmp ev
