#!/usr/bin/env bash
# The GPU machine's evidence run after a KV-quant score-kernel change (the decode-attention
# kernels unchanged): every kernel against the interpreter on CUDA and NVIDIA Vulkan, the
# fixtures, the KV-quant bandwidth benchmark and ptxas report (scripts/gpu-validate.sh
# without the grid and the attention benchmark), the KV-quant GPU test suites, and Nsight
# Compute of the three score kernels. Run there from the repository root with the
# binaries carried in .devbin (`onekernel` from `cargo build --release -p
# onekernel-codegen`; the test binaries from `cargo test --workspace --no-run` in
# .devbin/t), the Vulkan loader packages in .gl and the fixtures in .fx (see
# scripts/gpu-validate.sh):
#
#   bash scripts/gpu-kvquant-evidence.sh "$OUT/ev"
#
# The test suites read ../shared/fixtures and ../generated from the test binaries' build
# paths (/work/main here), so the script links them there.
set -u
ev=${1:-$OUT/ev}
mkdir -p "$ev"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw --format=csv -lms 200 > "$ev/clocks-kvquant.csv" &
smi=$!
ONEKERNEL_SKIP_GRID=1 ONEKERNEL_SKIP_ATTENTION_BENCH=1 bash scripts/gpu-validate.sh .devbin/onekernel "$ev" .fx > "$ev/gpu-validate-kvquant.log" 2>&1
echo "gpu-validate rc=$?"
kill $smi
source scripts/device-env.sh
mkdir -p /work/main/tests /work/shared/fixtures/attention /work/shared/fixtures/eliza
[ -e /work/main/generated ] || ln -sfn "$PWD/generated" /work/main/generated
for f in .fx/*; do case $f in *@*) cp "$f" /work/shared/fixtures/eliza/;; *) cp "$f" /work/shared/fixtures/attention/;; esac; done
for t in kvquant_formats eliza_fixtures cuda_backend vulkan_backend; do
    echo "== $t"; .devbin/t/$t --nocapture --test-threads 1 2>&1 | grep -vE "^\s*$"
done > "$ev/test-suites-kvquant.log" 2>&1
grep -E "^== |test result" "$ev/test-suites-kvquant.log"
sections="--section SourceCounters --section InstructionStats --section WarpStateStats --section SchedulerStats --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis_Tables"
for k in turbo_score qjl_score polar_score; do
    # The fourth dispatch: the first timed run of TBQ4 / QJL / Polar at L = 65536, 8 / 8 heads.
    timeout 150 ncu --kernel-name regex:$k --launch-skip 3 --launch-count 1 $sections -o /tmp/$k \
        .devbin/onekernel bench-kvquant --quick --runs 5 --backend cuda > /dev/null 2>&1
    echo "ncu $k rc=$?"
    ncu -i /tmp/$k.ncu-rep --page source --csv --print-source sass > "$ev/$k-sass.csv" 2>/dev/null
    ncu -i /tmp/$k.ncu-rep --page details > "$ev/ncu-$k.log" 2>&1
    python3 scripts/sass_profile.py "$ev/$k-sass.csv" 10 > "$ev/sass-$k-profile.txt" || true
done
echo "validate + fixture verdicts ok: $(grep -c ' ok ' "$ev/gpu-validate-kvquant.log")"
