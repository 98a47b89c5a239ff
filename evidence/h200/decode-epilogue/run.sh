# The evidence of this directory, in one device call (H200): the tensor-core decode
# kernel whose chunk epilogue finds each head's weights once (binary and generated/ of
# the working tree, .devbin/new) against its parent (.devbin/old: binary and generated/
# of b3eeb5f), alternated twice on both backends, SDPA in the same call; then two
# measured ideas: three buffers where the scheduler takes two (`--tensor-cores 2,3`), and
# the CUDA arrival as one invocation's acq_rel fences around its atomic instead of every
# invocation's __threadfence (evidence/h200/decode-epilogue/fence.py edits a copy of generated/).
# Per-workgroup timelines (globaltimer at entry, first block, loop end, arrival, end) come
# from a probe copy of the CUDA (evidence/h200/decode-epilogue/make.py, parse.py). Everything lands in
# ev/, returned as a tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/d.cubin generated/cuda/attn_decode_chunk_mma.cu > $E/ptxas.log 2>&1; grep -E "registers" $E/ptxas.log | sort | uniq -c
$K vk-stats --kernel attn_decode_chunk_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-150 | sort | uniq -c
/tmp/b/attention_tensor_cores --test-threads 1 > $E/attention_tensor_cores.log 2>&1; grep "test result" $E/attention_tensor_cores.log
$K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_decode_combine > $E/validate.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c MISMATCH $E/validate.log) mismatches"
for tool in memcheck racecheck synccheck; do timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --log-file $E/sanitize-$tool.log $K validate --backend cuda --kernel attn_decode_chunk_mma > $E/sanitize-$tool.out 2>&1; echo "$tool exit $?: $(grep -c ' ok ' $E/sanitize-$tool.out) verdicts ok; $(tail -n 1 $E/sanitize-$tool.log)"; done
for i in 1 2; do
  $K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/new-$i > $E/new-$i.md 2> $E/new-$i.log; echo "== new $i"; grep -E "^\| [0-9]" $E/new-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
  $O bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/old/generated > $E/old-$i.md 2> $E/old-$i.log; echo "== old $i"; grep -E "^\| [0-9]" $E/old-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep cudnn $E/bench-sdpa.log
python3 evidence/h200/decode-epilogue/fence.py generated /tmp/fg; python3 evidence/h200/decode-epilogue/make.py generated /tmp/pg
S="--shape 1x32768 --shape 16x4096 --shape 16x32768"
for i in 1 2; do
  $K bench --backend cuda --tensor-cores 2,3 --tensor-cores-only --runs 20 $S > $E/stages-$i.md 2> $E/stages-$i.log; echo "== stages 2,3 $i"; grep -E "^\| [0-9]" $E/stages-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
  $K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 20 $S --out /tmp/fg > $E/fence-$i.md 2> $E/fence-$i.log; echo "== fence $i"; grep -E "^\| [0-9]" $E/fence-$i.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
done
$K bench --backend cuda --tensor-cores 2 --tensor-cores-only --runs 4 --shape 16x4096 --out /tmp/pg > $E/probe-16x4096.md 2> $E/probe-16x4096.log; python3 evidence/h200/decode-epilogue/parse.py $E/probe-16x4096.md > $E/probe-16x4096.txt; head -11 $E/probe-16x4096.txt
tar czf $OUT/ev.tgz -C /tmp ev
