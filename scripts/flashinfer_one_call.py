#!/usr/bin/env python3
"""One FlashInfer tensor-core paged decode call (argv[1] = BxL, ANCHORS.md's heads) inside
the CUDA profiler's start/stop, after ten warm-ups, for `ncu --profile-from-start off`
(scripts/gpu-profile-tensor-cores.sh). Same cache and plan as bench_flashinfer.py."""
import sys

import torch

from bench_flashinfer import decode_call, paged_cache


def main(shape):
    b, l = (int(x) for x in shape.split("x"))
    workspace = torch.zeros(512 << 20, device="cuda", dtype=torch.uint8)
    gen = torch.Generator(device="cpu").manual_seed(7)
    call = decode_call(paged_cache(b, l, gen), True, workspace)
    for _ in range(10):
        call()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    call()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()


if __name__ == "__main__":
    main(sys.argv[1])
