#!/usr/bin/env python3
"""Picks FlashInfer's kernels and the useful columns out of Nsight Compute's raw CSV
(docs/experiments/ncu-flashinfer.sh's ncu-flashinfer-raw.csv, hundreds of columns) into
generated/evidence/ncu-flashinfer-h200.csv: NVTX range (shape and path; the warm-up run
lies outside the ranges), kernel, block, grid, duration (ns, base clocks), registers per
thread, static and dynamic shared memory per block, DRAM bytes read, achieved occupancy.
Usage: ncu_flashinfer_columns.py RAW.csv OUT.csv"""
import csv
import re
import sys

COLUMNS = [
    ("nvtx_range", "thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"),
    ("kernel", "Kernel Name"),
    ("block", "Block Size"),
    ("grid", "Grid Size"),
    ("duration_ns", "gpu__time_duration.sum"),
    ("registers_per_thread", "launch__registers_per_thread"),
    ("static_smem_bytes", "launch__shared_mem_per_block_static"),
    ("dynamic_smem_bytes", "launch__shared_mem_per_block_dynamic"),
    ("dram_bytes_read", "dram__bytes_read.sum"),
    ("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active"),
]


def main(raw, out):
    # ncu prints the profiled program's output first; the CSV rows are the quoted lines.
    rows = list(csv.reader(line for line in open(raw) if line.startswith('"')))
    header, data = rows[0], rows[2:]  # rows[1] holds the units
    idx = [header.index(col) for _, col in COLUMNS]
    table = [[name for name, _ in COLUMNS]]
    for r in data:
        v = [r[i] for i in idx]
        if "flashinfer::" not in v[1]:
            continue
        m = re.search(r"(B\d+xL\d+_\w+?):none", v[0])
        v[0] = m.group(1) if m else "warm-up (outside the ranges)"
        v[1] = v[1].split("<")[0]
        v[4:] = [x.replace(",", "") for x in v[4:]]
        table.append(v)
    csv.writer(open(out, "w")).writerows(table)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
