# attn_decode_chunk_mma with each block's pages read from the block table one step before
# their cells are written where it has two or more buffers (CUDA), and the chunk's four
# groups merged with the hardware's 2^x (this tree) against a470cb8's binary and
# generated/, alternated twice on CUDA and NVIDIA Vulkan (in one process); SDPA, the
# tensor-core decode suite and `validate` in the same call (call-2/; call-1/ read the
# pages ahead in the one-buffer form too, with Vulkan in the first round only).
. evidence/h200/device_prelude.sh
gunzip -c .devbin/base/onekernel.gz > /tmp/b/base; gunzip -c .devbin/new/t/attention_tensor_cores.gz > /tmp/b/ttc; chmod +x /tmp/b/*
mkdir -p /tmp/gbase && tar xzf .devbin/base/generated.tgz -C /tmp/gbase
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $E/gpu.txt
for i in 1 2; do
  be=cuda,vulkan
  $K bench --backend $be --tensor-cores 2 --tensor-cores-only --runs 20 > $E/dnew-$i.md 2> $E/dnew-$i.log; echo "new-$i $(drow $E/dnew-$i.md)"
  /tmp/b/base bench --backend $be --tensor-cores 2 --tensor-cores-only --runs 20 --out /tmp/gbase/generated > $E/dbase-$i.md 2> $E/dbase-$i.log; echo "base-$i $(drow $E/dbase-$i.md)"
done
python3 cli/anchors/sdpa.py $E/bench-sdpa.json > $E/bench-sdpa.log 2>&1; grep -iE "cudnn" $E/bench-sdpa.log | head -8
$K validate --backend cuda,vulkan --kernel attn_decode_chunk_mma > $E/validate-decode.log 2>&1; echo "validate: $(grep -c ' ok ' $E/validate-decode.log) ok, $(grep -ci skipped $E/validate-decode.log) skipped, $(grep -ci mismatch $E/validate-decode.log) mismatch"
/tmp/b/ttc --nocapture > $E/test-decode-tc.log 2>&1; grep -E "test result|panicked" $E/test-decode-tc.log | tail -5
tar czf $OUT/ev.tgz -C /tmp ev
