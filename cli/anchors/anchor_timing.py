"""Timing shared by the PyTorch anchors: CUDA events around one run of the calls, the
median of `runs` after `warmup`; with `scratch`, a read of it (a sum) before each timed
run, outside the events, so the inputs come from DRAM (the flush `onekernel`'s
benchmarks use)."""
import torch


def flush_scratch():
    """128 MiB of zeroed scratch: more than twice the L2 of an H100 or H200."""
    return torch.zeros(32 << 20, device="cuda", dtype=torch.int32)


def median_us(calls, scratch=None, runs=50, warmup=10):
    """Median device time in µs of `calls` (a callable or a list run in order)."""
    calls = calls if isinstance(calls, list) else [calls]
    for _ in range(warmup):
        for c in calls:
            c()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        if scratch is not None:
            scratch.sum()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for c in calls:
            c()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) * 1e3)
    times.sort()
    return times[len(times) // 2]
