# H200 call (`bash evidence/h200/prefill-anchor-profile/run.sh`): Nsight Compute's launch
# statistics and throughput of the kernel PyTorch SDPA's cuDNN backend runs for
# `bench-prefill`'s causal shapes 1 × 4096 and 16 × 512 (Hq 32, Hkv 8, D 128, fp16): its
# grid, workgroup, registers and shared memory, beside attn_prefill_mma's.
export PATH=$PATH:/usr/local/cuda/bin
cat > /tmp/cudnn_prefill.py <<'PY'
import sys, torch
from torch.nn.attention import SDPBackend, sdpa_kernel
b, t = int(sys.argv[1]), int(sys.argv[2])
q = torch.randn(b, 32, t, 128, device="cuda", dtype=torch.float16)
k = torch.randn(b, 8, t, 128, device="cuda", dtype=torch.float16)
v = torch.randn(b, 8, t, 128, device="cuda", dtype=torch.float16)
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(3):
        torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
torch.cuda.synchronize()
PY
for c in "1 4096" "16 512"; do
  set -- $c
  timeout 200 ncu --section LaunchStats --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis --launch-skip 2 --launch-count 1 -k regex:'cudnn|fprop|sdpa|fmha' python3 /tmp/cudnn_prefill.py $1 $2 > $OUT/ncu-cudnn-$1x$2.txt 2>&1; echo "ncu $1x$2 exit $?"
  grep -E "fprop|sdpa|fmha|Grid Size|Block Size|Registers Per|Duration|Shared Memory Per Block|Waves Per SM|Tensor|Theoretical Occupancy|Cluster" $OUT/ncu-cudnn-$1x$2.txt | head -20
done
