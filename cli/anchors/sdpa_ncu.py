#!/usr/bin/env python3
"""One SDPA decode call on ANCHORS.md's shape (Hq 32, Hkv 8, D 128, fp16, one query token,
contiguous KV, enable_gqa=True) between `cudaProfilerStart` and `cudaProfilerStop`, so
Nsight Compute profiles the anchor's own kernel and nothing of the warm-up:

    ncu --profile-from-start off --section SpeedOfLight ... python3 sdpa_ncu.py B L [cudnn|flash]

B and L are the batch and the KV length; the backend is cuDNN unless `flash` is named."""
import sys

import torch
from sdpa import D, HKV, HQ  # the shape the decode anchor times
from torch.nn.attention import SDPBackend, sdpa_kernel


def main(b, l, backend):
    q = torch.randn(b, HQ, 1, D, device="cuda", dtype=torch.float16)
    k = torch.randn(b, HKV, l, D, device="cuda", dtype=torch.float16)
    v = torch.randn(b, HKV, l, D, device="cuda", dtype=torch.float16)
    chosen = SDPBackend.FLASH_ATTENTION if backend == "flash" else SDPBackend.CUDNN_ATTENTION
    with sdpa_kernel(chosen):
        for _ in range(3):
            torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        torch.cuda.profiler.start()
        torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        torch.cuda.synchronize()
        torch.cuda.profiler.stop()


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit("usage: sdpa_ncu.py B L [cudnn|flash]")
    main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "cudnn")
