#!/usr/bin/env python3
"""PyTorch SDPA (flash and cuDNN backends) on `onekernel bench-prefill`'s causal prefill
shapes, in the same GPU session: Hq 32, Hkv 8, D 128, fp16, contiguous K/V,
is_causal=True, enable_gqa=True; B × T ∈ {1 × 4096, 4 × 2048, 16 × 512}, and the varlen
mix as one call per sequence (SDPA has no varlen batch; the new tokens attend to the
cached prefix through an explicit causal-offset mask there), times summed. CUDA events
around the call(s), median of 30 after 5 warm-ups, 128 MiB of zeroed scratch read before
each timed run (the flush `onekernel bench-prefill` uses). TFLOP/s with causal FLOPs
counted once (4 · D · Hq per visible pair). Writes JSON to argv[1]."""
import json
import sys

import torch
from anchor_timing import flush_scratch, median_us
from torch.nn.attention import SDPBackend, sdpa_kernel

HQ, HKV, D = 32, 8, 128
CASES = [("1 × 4096", [(4096, 4096)]), ("4 × 2048", [(2048, 2048)] * 4), ("16 × 512", [(512, 512)] * 16),
         ("varlen mix", [(3000, 3000), (2148, 100), (700, 700), (1456, 1200)])]


def flops(seqs):
    return sum(4.0 * D * HQ * (l - t + i + 1) for l, t in seqs for i in range(t))


def calls_for(seqs):
    calls = []
    if all(l == t for l, t in seqs) and len(set(seqs)) == 1:
        l = seqs[0][0]
        q = torch.randn(len(seqs), HQ, l, D, device="cuda", dtype=torch.float16)
        k = torch.randn(len(seqs), HKV, l, D, device="cuda", dtype=torch.float16)
        v = torch.randn(len(seqs), HKV, l, D, device="cuda", dtype=torch.float16)
        calls.append(lambda: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        return calls
    for l, t in seqs:
        q = torch.randn(1, HQ, t, D, device="cuda", dtype=torch.float16)
        k = torch.randn(1, HKV, l, D, device="cuda", dtype=torch.float16)
        v = torch.randn(1, HKV, l, D, device="cuda", dtype=torch.float16)
        if l == t:
            calls.append(lambda q=q, k=k, v=v: torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        else:
            pos = torch.arange(l - t, l, device="cuda")[:, None]
            mask = torch.arange(l, device="cuda")[None, :] <= pos
            calls.append(lambda q=q, k=k, v=v, m=mask: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True))
    return calls


def main(path):
    scratch = flush_scratch()
    results = []
    for label, seqs in CASES:
        calls = calls_for(seqs)
        f = flops(seqs)
        for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION),
                              ("sdpa_efficient", SDPBackend.EFFICIENT_ATTENTION)):
            rec = {"backend": name, "case": label, "sequences": [{"kv_len": l, "new_tokens": t} for l, t in seqs], "causal_flops": f}
            try:
                with sdpa_kernel(backend):
                    us = median_us(calls, scratch, runs=30, warmup=5)
                rec.update(median_us=us, tflop_per_s=f / (us * 1e-6) / 1e12)
                print(f"{name:<15} {label:<11} {us:9.1f} µs  {rec['tflop_per_s']:6.1f} TFLOP/s", flush=True)
            except Exception as ex:  # a backend unavailable for a case is recorded, not fatal
                rec["error"] = str(ex).splitlines()[0]
                print(f"{name:<15} {label:<11} unavailable: {rec['error']}", flush=True)
            results.append(rec)
    doc = {"anchor": "torch.nn.functional.scaled_dot_product_attention, causal, fp16", "torch": torch.__version__,
           "device": torch.cuda.get_device_name(), "flush": "128 MiB zeroed scratch summed before each timed run",
           "runs": 30, "warmup": 5, "results": results}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
