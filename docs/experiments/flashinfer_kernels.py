#!/usr/bin/env python3
"""The kernels FlashInfer 0.2.14's paged decode launches, for Nsight Compute: one `plan`
and two `run`s per (shape, path) at ANCHORS.md's decode shapes B × L ∈ {1 × 4096,
1 × 32768, 128 × 8192} (Hq 32, Hkv 8, D 128, fp16, pages of 16 in a random permutation,
NHD), CUDA-core and tensor-core paths, with an NVTX range naming each, so that
`ncu --nvtx` attributes every kernel (grid, block, registers, duration) to its shape.
Run with FlashInfer on PYTHONPATH (scripts/flashinfer-env.sh)."""
import torch
import flashinfer

HQ, HKV, D, PAGE = 32, 8, 128, 16
workspace = torch.zeros(512 << 20, device="cuda", dtype=torch.uint8)
gen = torch.Generator(device="cpu").manual_seed(7)
for b, l in [(1, 4096), (1, 32768), (128, 8192)]:
    pages_per_seq = l // PAGE
    n = b * pages_per_seq
    k = torch.randn(n, PAGE, HKV, D, device="cuda", dtype=torch.float16)
    v = torch.randn(n, PAGE, HKV, D, device="cuda", dtype=torch.float16)
    q = torch.randn(b, HQ, D, device="cuda", dtype=torch.float16)
    indices = torch.randperm(n, generator=gen).to(device="cuda", dtype=torch.int32)
    indptr = torch.arange(0, n + 1, pages_per_seq, device="cuda", dtype=torch.int32)
    last = torch.full((b,), PAGE, device="cuda", dtype=torch.int32)
    for tc in (False, True):
        w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD", use_tensor_cores=tc)
        w.plan(indptr, indices, last, HQ, HKV, D, PAGE, q_data_type=torch.float16, kv_data_type=torch.float16)
        w.run(q, (k, v))
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push(f"B{b}xL{l}_{'tc' if tc else 'cuda_cores'}")
        for _ in range(2):
            w.run(q, (k, v))
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        print(f"B {b} L {l} tensor_cores {tc}: ran", flush=True)
    del k, v, q
    torch.cuda.empty_cache()
