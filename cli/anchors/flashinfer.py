#!/usr/bin/env python3
"""FlashInfer's paged decode (`BatchDecodeWithPagedKVCacheWrapper`) on ANCHORS.md's decode
shapes, in the same GPU session as `onekernel bench`, so the ratio is measured, not
copied: Hq 32, Hkv 8, D 128, fp16, one query token, pages of 16 tokens in the NHD layout
(`[pages][16][Hkv][D]`, ggml's token-major rows as in onekernel's paged cache) in a random
permutation. Both of FlashInfer's decode paths are timed (`use_tensor_cores` False and
True); `plan` runs once per shape, outside the timing. CUDA events around one `run`,
median of 50 after 10 warm-ups, as ANCHORS.md (no flush), and the way `onekernel bench`
and `sdpa.py` time kernels: 128 MiB of zeroed scratch read (a sum) before each
timed call, so K and V come from DRAM (`median_us_l2_read_flush`). A path that fails
for a shape is recorded with its error, not fatal. FlashInfer is not part of this
repository: the GPU-machine script unpacks its PyPI source distribution there and puts
it on PYTHONPATH (it JIT-compiles its kernels with nvcc). Writes JSON to argv[1]."""
import json
import sys

import torch

from anchor_timing import flush_scratch, median_us  # the same timing as SDPA's

SHAPES = [(1, 4096), (1, 32768), (16, 4096), (64, 4096), (16, 32768), (128, 8192)]
HQ, HKV, D, PAGE = 32, 8, 128, 16


def paged_cache(b, l, gen):
    """B = `b` sequences of `l` tokens: random K, V and queries, the pages of all
    sequences in one random permutation drawn from `gen`, FlashInfer's page table."""
    pages_per_seq = l // PAGE
    n_pages = b * pages_per_seq
    k = torch.randn(n_pages, PAGE, HKV, D, device="cuda", dtype=torch.float16)
    v = torch.randn(n_pages, PAGE, HKV, D, device="cuda", dtype=torch.float16)
    q = torch.randn(b, HQ, D, device="cuda", dtype=torch.float16)
    indices = torch.randperm(n_pages, generator=gen).to(device="cuda", dtype=torch.int32)
    indptr = torch.arange(0, n_pages + 1, pages_per_seq, device="cuda", dtype=torch.int32)
    last = torch.full((b,), PAGE, device="cuda", dtype=torch.int32)
    return k, v, q, indices, indptr, last


def decode_call(cache, tensor_cores, workspace):
    """FlashInfer's decode of `cache` (from `paged_cache`), planned: the call that runs it."""
    import flashinfer

    k, v, q, indices, indptr, last = cache
    w = flashinfer.BatchDecodeWithPagedKVCacheWrapper(workspace, "NHD", use_tensor_cores=tensor_cores)
    w.plan(indptr, indices, last, HQ, HKV, D, PAGE, q_data_type=torch.float16, kv_data_type=torch.float16)
    return lambda: w.run(q, (k, v))


def main(path):
    import flashinfer

    scratch = flush_scratch()
    workspace = torch.zeros(512 << 20, device="cuda", dtype=torch.uint8)
    gen = torch.Generator(device="cpu").manual_seed(7)
    results = []
    for b, l in SHAPES:
        cache = paged_cache(b, l, gen)
        for tc in (False, True):
            name = "flashinfer_paged_tensor_cores" if tc else "flashinfer_paged"
            rec = {"backend": name, "batch": b, "kv_len": l, "page_size": PAGE, "layout": "NHD", "pages": "random permutation"}
            try:
                call = decode_call(cache, tc, workspace)
                us, flushed = median_us(call, None), median_us(call, scratch)
                kv = 2 * b * l * HKV * D * 2
                rec.update(median_us=us, tb_per_s=kv / (us * 1e-6) / 1e12)
                rec.update(median_us_l2_read_flush=flushed, tb_per_s_l2_read_flush=kv / (flushed * 1e-6) / 1e12)
                print(f"{name:<30} B {b:>3} L {l:>5}  {us:9.1f} µs  {rec['tb_per_s']:.2f} TB/s; after a read flush {flushed:9.1f} µs  {rec['tb_per_s_l2_read_flush']:.2f} TB/s", flush=True)
            except Exception as ex:  # recorded, not fatal
                rec["error"] = str(ex).splitlines()[0] if str(ex) else type(ex).__name__
                print(f"{name:<30} B {b:>3} L {l:>5}  unavailable: {rec['error']}", flush=True)
            results.append(rec)
        call = cache = None
        torch.cuda.empty_cache()
    doc = {"flashinfer": getattr(flashinfer, "__version__", "unknown"), "torch": torch.__version__, "device": torch.cuda.get_device_name(), "l2_read_flush_bytes": 128 << 20, "shape": {"n_heads": HQ, "n_kv_heads": HKV, "head_dim": D, "dtype": "float16"}, "results": results}
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "bench-flashinfer.json")
