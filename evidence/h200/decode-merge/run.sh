# The evidence of this directory, in one device call (H200): binaries built on the
# development machine (`cargo build --release -p onekernel-cli`, `cargo test --release
# --no-run` for the suites), stripped and gzipped into .devbin/new; the NVIDIA Vulkan
# loader packages in .gl (docs/RUNTIME.md). Everything lands in ev/, returned as a tarball.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json PATH=$PATH:/usr/local/cuda/bin ONEKERNEL_ROOT=$PWD
mkdir -p /tmp/b /tmp/ev; gunzip -c .devbin/new/onekernel.gz > /tmp/b/onekernel; for t in .devbin/new/t/*.gz; do gunzip -c $t > /tmp/b/$(basename $t .gz); done; chmod +x /tmp/b/*
E=/tmp/ev; K=/tmp/b/onekernel
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $E/device.txt
nvcc -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -Xptxas -v -o /tmp/d.cubin generated/cuda/attn_decode_chunk_mma.cu > $E/ptxas.log 2>&1; grep -E "registers" $E/ptxas.log | sort | uniq -c
$K vk-stats --kernel attn_decode_chunk_mma > $E/vk-stats.log 2>&1; grep -E "Register" $E/vk-stats.log | cut -c1-150
suite() { /tmp/b/$1 --nocapture --test-threads 1 > $E/$1.log 2>&1; echo "$1: $(grep -E '^test result' $E/$1.log)"; grep -E "panicked" -A3 $E/$1.log | cut -c1-300 | head -8; }
suite arrivals; suite attention_tensor_cores; suite tiles
$K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma --kernel attn_decode_combine > $E/validate.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate.log) ok, $(grep -c MISMATCH $E/validate.log) mismatches"
for tool in memcheck racecheck synccheck; do timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 --log-file $E/sanitize-$tool.log $K validate --backend cuda --kernel attn_decode_chunk_mma > $E/sanitize-$tool.out 2>&1; echo "$tool exit $?: $(grep -c ' ok ' $E/sanitize-$tool.out) verdicts ok; $(tail -n 1 $E/sanitize-$tool.log)"; done
# The step as the runtime chooses (CUDA merges, Vulkan launches the combine), then both
# ways on both backends, alternated twice.
$K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --evidence $E/default > $E/default.md 2> $E/default.log; grep -E "^\| [0-9]" $E/default.md
for i in 1 2; do for m in merge no-merge; do
  $K bench --backend cuda,vulkan --tensor-cores 2 --tensor-cores-only --runs 20 --$m --shape 1x32768 --shape 16x4096 --shape 16x32768 > $E/$m-$i.md 2> $E/$m-$i.log; echo "== --$m $i"; grep -E "^\| [0-9]" $E/$m-$i.md
done; done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep cudnn $E/bench-sdpa.log
tar czf $OUT/ev.tgz -C /tmp ev
