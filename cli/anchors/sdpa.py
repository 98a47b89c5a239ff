#!/usr/bin/env python3
"""PyTorch SDPA (flash and cuDNN backends) on ANCHORS.md's decode shapes, in the same
GPU session as `onekernel bench`, so the ratio is measured, not copied: Hq 32, Hkv 8,
D 128, fp16, one query token, contiguous KV, enable_gqa=True; CUDA events around one
call, median of 50 after 10 warm-ups (ANCHORS.md's method: no flush). Each shape is also
timed the way `onekernel bench` times its kernels: 128 MiB of zeroed scratch read (a sum)
before each timed call, so K and V come from DRAM and the L2 holds clean lines
(`median_us_l2_read_flush`). Writes JSON to argv[1]."""
import json
import sys

import torch
from anchor_timing import flush_scratch, median_us
from torch.nn.attention import SDPBackend, sdpa_kernel

SHAPES = [(1, 4096), (1, 32768), (16, 4096), (64, 4096), (16, 32768), (128, 8192)]
HQ, HKV, D = 32, 8, 128


def main(path):
    scratch = flush_scratch()
    results = []
    for b, l in SHAPES:
        q = torch.randn(b, HQ, 1, D, device="cuda", dtype=torch.float16)
        k = torch.randn(b, HKV, l, D, device="cuda", dtype=torch.float16)
        v = torch.randn(b, HKV, l, D, device="cuda", dtype=torch.float16)
        for name, backend in (("sdpa_flash", SDPBackend.FLASH_ATTENTION), ("sdpa_cudnn", SDPBackend.CUDNN_ATTENTION)):
            rec = {"backend": name, "batch": b, "kv_len": l}
            try:
                with sdpa_kernel(backend):
                    def call():
                        return torch.nn.functional.scaled_dot_product_attention(q, k, v, enable_gqa=True)
                    medians = [median_us(call, None), median_us(call, scratch)]
                us, flushed = medians
                rec.update(median_us=us, tb_per_s=2 * b * l * HKV * D * 2 / (us * 1e-6) / 1e12)
                rec.update(median_us_l2_read_flush=flushed, tb_per_s_l2_read_flush=2 * b * l * HKV * D * 2 / (flushed * 1e-6) / 1e12)
                print(f"{name:<11} B {b:>3} L {l:>5}  {us:9.1f} µs  {rec['tb_per_s']:.2f} TB/s; after a read flush {flushed:9.1f} µs  {rec['tb_per_s_l2_read_flush']:.2f} TB/s", flush=True)
            except Exception as ex:  # a backend unavailable for a shape is recorded, not fatal
                rec["error"] = str(ex).splitlines()[0]
                print(f"{name:<11} B {b:>3} L {l:>5}  unavailable: {rec['error']}", flush=True)
            results.append(rec)
        del q, k, v
        torch.cuda.empty_cache()
    doc = {"torch": torch.__version__, "device": torch.cuda.get_device_name(), "l2_read_flush_bytes": 128 << 20, "shape": {"n_heads": HQ, "n_kv_heads": HKV, "head_dim": D, "dtype": "float16"}, "results": results}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-sdpa.json")
