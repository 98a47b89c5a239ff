# H200 call: `attn_prefill_mma` and `attn_decode_chunk_mma` with the page size a spec
# constant (.devbin/new: the working tree's binary and generated/) against the kernels
# with it a push constant (.devbin/old: the binary of 02fbc44 with f91773a's generated/,
# the same kernels), alternated twice on CUDA (once on NVIDIA's Vulkan), SDPA in the
# same call; the prefill suite and validate of both kernels on both backends.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
rm -rf /tmp/b /tmp/old /tmp/ev; mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
prow() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s%s:%s  ", $2, $3, $6}'; echo; }
drow() { grep -E "^\| [0-9]+ × [0-9]+ \| [0-9.]+ µs" $1 | awk -F'|' '{printf "%s:%s ", $2, $3}'; echo; }
timeout 100 /tmp/b/attention_prefill_tensor_cores --test-threads 1 2>&1 | grep -E "^test |panicked|result" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
timeout 120 $K validate --backend cuda,vulkan --kernel attn_prefill_mma > $E/validate-prefill.log 2>&1; echo "validate prefill exit $?: $(grep -c ' ok ' $E/validate-prefill.log) ok, $(grep -c SKIPPED $E/validate-prefill.log) skipped, $(grep -c MISMATCH $E/validate-prefill.log) mismatches"
timeout 120 $K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma > $E/validate-decode.log 2>&1; echo "validate decode exit $?: $(grep -c ' ok ' $E/validate-decode.log) ok, $(grep -c SKIPPED $E/validate-decode.log) skipped, $(grep -c MISMATCH $E/validate-decode.log) mismatches"
for i in 1 2; do
  B=cuda; [ $i = 1 ] && B=cuda,vulkan
  timeout 100 $K bench-prefill --backend $B --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "prefill new $i: "; prow $E/pnew-$i.md
  timeout 100 $O bench-prefill --backend $B --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "prefill old $i: "; prow $E/pold-$i.md
  timeout 100 $K bench --backend $B --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/dnew-$i > $E/dnew-$i.md 2> $E/dnew-$i.log; echo -n "decode new $i: "; drow $E/dnew-$i.md
  timeout 100 $O bench --backend $B --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/old/generated > $E/dold-$i.md 2> $E/dold-$i.log; echo -n "decode old $i: "; drow $E/dold-$i.md
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn" $E/bench-sdpa-prefill.log
tar czf $OUT/ev.tgz -C /tmp ev
