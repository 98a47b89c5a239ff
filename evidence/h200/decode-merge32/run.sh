# The evidence of this directory, in one device call (H200): `attn_decode_chunk_mma`'s
# `finish` variant merging up to 32 chunks per sequence in the last workgroup to arrive
# (the working tree, .devbin/new) against its parent, which merged up to four and left
# more to the combine (.devbin/old: the binary of f975755 and `git archive HEAD
# generated` of the commit before), the tensor-core step on CUDA alternated twice,
# PyTorch SDPA in the same call; then the suite, validate and ptxas's report.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
for i in 1 2; do
  $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/new-$i > $E/new-$i.md 2> $E/new-$i.log; echo "== new $i"; grep -E "^\| [0-9]" $E/new-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
  $O bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/old/generated > $E/old-$i.md 2> $E/old-$i.log; echo "== old $i"; grep -E "^\| [0-9]" $E/old-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep cudnn $E/bench-sdpa.log
timeout 150 /tmp/b/attention_tensor_cores --nocapture --test-threads 1 > $E/decode-suite.log 2>&1; grep -E "^test result|panicked|merged in the chunk kernel" $E/decode-suite.log | grep -E "result|panicked|on cuda"
timeout 100 $K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_decode_chunk_mma.cu > $E/ptxas.log 2>&1; grep -E 'registers|spill' $E/ptxas.log | sed 's/.*Used //' | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
