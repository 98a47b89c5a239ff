#!/usr/bin/env python3
"""The f16 GEMV anchor of `onekernel bench-formats`' NVFP4 rows: y = W·x with W f16
[N][K] and x f16 [K], through torch.nn.functional.linear (cuBLAS), on the same shapes
(4096 × 4096, 14336 × 4096, 4096 × 14336), in the same GPU session. CUDA events around
one call, median of 50 after 10 warm-ups, 128 MiB of zeroed scratch read (a sum) before
each timed call so the weights come from DRAM (the flush `onekernel bench-formats` uses).
Reported as weight bytes over the time. Writes JSON to argv[1]."""
import json
import sys

import torch
from anchor_timing import flush_scratch, median_us

SHAPES = [(4096, 4096), (14336, 4096), (4096, 14336)]


def main(path):
    scratch = flush_scratch()
    results = []
    for n, k in SHAPES:
        w = torch.randn(n, k, device="cuda", dtype=torch.float16)
        x = torch.randn(1, k, device="cuda", dtype=torch.float16)
        us = median_us(lambda: torch.nn.functional.linear(x, w), scratch)
        gbs = n * k * 2 / (us * 1e-6) / 1e9
        print(f"f16 GEMV (cuBLAS) {n:>5} x {k:>5}  {us:8.2f} µs  {gbs:6.0f} GB/s of weights", flush=True)
        results.append({"rows": n, "cols": k, "dtype": "float16", "weight_bytes": n * k * 2, "median_us": us, "gb_per_s": gbs})
    doc = {"anchor": "torch.nn.functional.linear, f16, one token (cuBLAS GEMV)", "torch": torch.__version__,
           "device": torch.cuda.get_device_name(), "flush": "128 MiB zeroed scratch summed before each timed call",
           "runs": 50, "warmup": 10, "results": results}
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
