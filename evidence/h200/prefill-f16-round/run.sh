# The evidence of this directory, in two device calls (H200): `f32_to_f16_bits` (one
# `cvt.rn.f16.f32` on CUDA) for the Q tiles of `attn_prefill_mma` and
# `attn_decode_chunk_mma`, and the prefill epilogue's factors once per row. Binaries built
# on the development machine (`cargo build --release -p onekernel-cli`; the suites by
# `cargo test --release --no-run`), stripped and gzipped into .devbin/new; the parent's
# binary and `git archive HEAD generated` in .devbin/old; the NVIDIA Vulkan loader
# packages in .gl (docs/RUNTIME.md). `run.sh perf`: the A/B (alternated twice for prefill,
# once for decode) and PyTorch SDPA in the same call; `run.sh checks`: the suites,
# validate, compute-sanitizer and the compilers' reports. Everything lands in ev/,
# returned as a tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/old /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; gunzip -c .devbin/old/onekernel.gz > /tmp/old/onekernel
for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/* /tmp/old/*; tar xzf .devbin/old/generated.tgz -C /tmp/old
E=/tmp/ev; K=/tmp/b/onekernel; O=/tmp/old/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device-$1.txt
row() { grep 'tensor cores (' $1 | awk -F'|' '{printf "%s %s:%s ", $2, $3, $6}'; echo; }
# `run.sh final` (the kernels and helpers of this commit): the prefill A/B and SDPA first,
# then the checks, then the decode A/B and its SDPA; call-1/ holds `run.sh perf` of the
# commit before, whose GLSL and MSL rounding helpers branched.
if [ "$1" = perf ] || [ "$1" = final ]; then
  n=2; [ "$1" = final ] && n=1
  for i in $(seq $n); do
    $K bench-prefill --backend cuda,vulkan --runs 10 --evidence $E/pnew-$i > $E/pnew-$i.md 2> $E/pnew-$i.log; echo -n "prefill new $i: "; row $E/pnew-$i.md
    $O bench-prefill --backend cuda,vulkan --runs 10 --out /tmp/old/generated > $E/pold-$i.md 2> $E/pold-$i.log; echo -n "prefill old $i: "; row $E/pold-$i.md
  done
  python3 cli/anchors/sdpa_prefill.py $E/bench-sdpa-prefill.json > $E/bench-sdpa-prefill.log 2>&1; grep -E "cudnn|flash" $E/bench-sdpa-prefill.log
fi
if [ "$1" = checks ] || [ "$1" = final ]; then
  for k in attn_prefill_mma attn_decode_chunk_mma; do nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/k.cubin generated/cuda/$k.cu > $E/ptxas-$k.log 2>&1; echo "$k: $(grep -E 'registers' $E/ptxas-$k.log | sed 's/.*Used //' | sort | uniq -c | tr '\n' ';')"; done
  $K vk-stats --kernel attn_prefill_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-120 | sort | uniq -c
  suite() { timeout 200 /tmp/b/$1 --nocapture --test-threads 1 2>&1 | grep -E "^test |within|SKIP|panicked|result|NMSE|rounded"; }
  suite f16_rounding > $E/f16_rounding.log; grep -E "rounded|result" $E/f16_rounding.log
  suite attention_prefill_tensor_cores > $E/prefill-suite.log 2>&1; grep -E "^test result|panicked" $E/prefill-suite.log
  suite attention_tensor_cores > $E/decode-suite.log 2>&1; grep -E "^test result|panicked" $E/decode-suite.log
  timeout 150 $K validate --backend cuda,vulkan --kernel attn_prefill_mma --kernel attn_decode_chunk_mma --kernel rms_norm_f16 --kernel layer_norm_f16 > $E/validate.log 2>&1; echo "validate exit $?: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c SKIPPED $E/validate.log) skipped, $(grep -c MISMATCH $E/validate.log) mismatches"
fi
if [ "$1" = perf ] || [ "$1" = final ]; then
  $K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 > $E/dnew.md 2> $E/dnew.log; echo "== decode new"; grep -E "^\| [0-9]" $E/dnew.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
  $O bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/old/generated > $E/dold.md 2> $E/dold.log; echo "== decode old"; grep -E "^\| [0-9]" $E/dold.md | cut -d'|' -f2,3 | tr '\n' ' '; echo
  python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep cudnn $E/bench-sdpa.log
fi
if [ "$1" = checks ] || [ "$1" = final ]; then
  timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 --log-file $E/sanitize-memcheck.log $K validate --backend cuda --kernel attn_prefill_mma > $E/sanitize-memcheck.out 2>&1; echo "memcheck exit $?: $(grep -c ' ok ' $E/sanitize-memcheck.out) verdicts ok; $(tail -n 1 $E/sanitize-memcheck.log)"
fi
tar czf $OUT/ev-$1.tgz -C /tmp ev
