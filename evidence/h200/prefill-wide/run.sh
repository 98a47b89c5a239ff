# call-1/ (H200), run on the tree of 83a8f76 (its binary in .devbin/new): `attn_prefill_mma`
# with the scores of the next block running beside a block's softmax ("new") against its
# parent's generated/ ("old": `git archive 15657ea generated`) with the same binary,
# alternated twice; timing probes of hand-edited copies of either (variants.py: pv128,
# assume, ss), each checked by `validate`; the suite, ptxas. The binary refused the
# parent's generated/ (its kernel source hash differs), so "old" did not run; the parent's
# figures are those of call-2 (run2.sh) and ../prefill-epilogue/.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
python3 evidence/h200/prefill-wide/variants.py /tmp/old/generated /tmp/vold > /dev/null
python3 evidence/h200/prefill-wide/variants.py generated /tmp/vnew > /dev/null
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s:%s ", $2, $3, $6}'; echo; }
b() { # name dir backends
  $K bench-prefill --backend $3 --runs 10 --out $2 > $E/$1.md 2> $E/$1.log; echo -n "$1: "; row $E/$1.md; }
b new-1 generated cuda,vulkan; b old-1 /tmp/old/generated cuda,vulkan
for v in pv128 assume ss; do b old-$v /tmp/vold/$v cuda; b new-$v /tmp/vnew/$v cuda; done
b new-2 generated cuda; b old-2 /tmp/old/generated cuda
for d in generated /tmp/vold/pv128 /tmp/vold/ss /tmp/vnew/pv128 /tmp/vnew/ss; do
  timeout 100 $K validate --backend cuda --kernel attn_prefill_mma --out $d > $E/validate-$(basename $(dirname $d))-$(basename $d).log 2>&1
  echo "validate $d exit $?: $(grep -c ' ok ' $E/validate-*$(basename $d).log | tail -1) ok, $(grep -c MISMATCH $E/validate-$(basename $(dirname $d))-$(basename $d).log) mismatches"; done
timeout 200 /tmp/b/attention_prefill_tensor_cores --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE" > $E/prefill-suite.log; grep -E "^test result|panicked" $E/prefill-suite.log
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/attn_prefill_mma.cu > $E/ptxas.log 2>&1; grep -E 'registers|spill' $E/ptxas.log | sed 's/.*Used //' | sort | uniq -c
tar czf $OUT/ev.tgz -C /tmp ev
