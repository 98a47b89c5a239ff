# call-2/ (H200), run on 1ba07e9 with the template change below (not kept): the CUDA template telling the compiler the workgroup's shape
# (`__builtin_assume`; the working tree's binary and generated/, "new") against its parent
# (.devbin/old: the binary and `git archive HEAD generated` of 1ba07e9), alternated twice
# for prefill and for the tensor-core decode step, SDPA in the same call; timing probes of
# hand-edited copies of the new generated/ (variants.py: pv128, qss), checked by
# `validate`; `validate` of every kernel on CUDA; both tensor-core suites.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-wide/variants.py generated /tmp/v pv128,qss > /dev/null
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s:%s ", $3, $6}'; echo; }
drow() { grep -E '^\| [0-9]' $1 | cut -d'|' -f2,3 | tr '\n' ' '; echo; }
for i in 1 2; do
  $K bench-prefill --backend cuda --runs 10 > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "prefill new $i: "; row $E/pnew-$i.md
  $O bench-prefill --backend cuda --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "prefill old $i: "; row $E/pold-$i.md
  $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 > $E/dnew-$i.md 2> $E/dnew-$i.log; echo -n "decode new $i: "; drow $E/dnew-$i.md
  $O bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/old/generated > $E/dold-$i.md 2> $E/dold-$i.log; echo -n "decode old $i: "; drow $E/dold-$i.md
done
for v in pv128 qss; do $K bench-prefill --backend cuda --runs 10 --out /tmp/v/$v > $E/p-$v.md 2> $E/p-$v.log; echo -n "prefill $v: "; row $E/p-$v.md
  timeout 60 $K validate --backend cuda --kernel attn_prefill_mma --out /tmp/v/$v > $E/validate-$v.log 2>&1; echo "validate $v exit $?: $(grep -c ' ok ' $E/validate-$v.log) ok, $(grep -c MISMATCH $E/validate-$v.log) mismatches"; done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
timeout 280 $K validate --backend cuda > $E/validate-all.log 2>&1; echo "validate all exit $?: $(grep -c ' ok ' $E/validate-all.log) ok, $(grep -c SKIPPED $E/validate-all.log) skipped, $(grep -c MISMATCH $E/validate-all.log) mismatches"
for t in attention_prefill_tensor_cores attention_tensor_cores; do timeout 150 /tmp/b/$t --nocapture --test-threads 1 2>&1 | grep -E "^test |SKIP|panicked|result" > $E/$t.log; grep -E "^test result|panicked" $E/$t.log; done
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_prefill_mma.cu > $E/ptxas-prefill.log 2>&1
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_decode_chunk_mma.cu > $E/ptxas-decode.log 2>&1; grep -hE 'registers|spill' $E/ptxas-*.log | sed 's/.*Used //' | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
