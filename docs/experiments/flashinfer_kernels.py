#!/usr/bin/env python3
"""The kernels FlashInfer 0.2.14's paged decode launches, for Nsight Compute: one `plan`
and two `run`s per (shape, path) at ANCHORS.md's decode shapes B × L ∈ {1 × 4096,
1 × 32768, 128 × 8192} (Hq 32, Hkv 8, D 128, fp16, pages of 16 in a random permutation,
NHD), CUDA-core and tensor-core paths, with an NVTX range naming each, so that
`ncu --nvtx` attributes every kernel (grid, block, registers, duration) to its shape.
Run with FlashInfer on PYTHONPATH (scripts/flashinfer-env.sh)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from bench_flashinfer import decode_call, paged_cache  # noqa: E402

workspace = torch.zeros(512 << 20, device="cuda", dtype=torch.uint8)
gen = torch.Generator(device="cpu").manual_seed(7)
for b, l in [(1, 4096), (1, 32768), (128, 8192)]:
    cache = paged_cache(b, l, gen)
    for tc in (False, True):
        call = decode_call(cache, tc, workspace)
        call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"B{b}xL{l}_{'tc' if tc else 'cuda_cores'}")
        for _ in range(2):
            call()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"B {b} L {l} tensor_cores {tc}: ran", flush=True)
    call = cache = None
    torch.cuda.empty_cache()
