#!/usr/bin/env python3
"""The roofline's ceilings on this GPU, measured with PyTorch by the project's timing protocol (events,
warm-up, median of 30): DRAM bandwidth as a device-to-device copy of 4 GiB (bytes read + written per
second) and dense bf16 GEMM throughput (8192^3, cuBLAS). Writes one CSV (temporary name, then renamed).
Usage: ceilings.py --out ceilings.csv"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from peers import time_call  # noqa: E402  (the one timing protocol)


def median_ms(fn):
    return time_call(lambda _: fn(), [None])[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    n_bytes = 4 << 30
    src = torch.empty(n_bytes, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    copy_ms = median_ms(lambda: dst.copy_(src))
    bandwidth = 2 * n_bytes / (copy_ms * 1e-3)  # read + write
    del src, dst
    m = 8192
    x = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    y = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    gemm_ms = median_ms(lambda: x @ y)
    flops = 2 * m ** 3 / (gemm_ms * 1e-3)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"# {torch.cuda.get_device_name()} torch {torch.__version__}\n")
        f.write("ceiling,value,unit,median_ms\n")
        f.write(f"dram_copy,{bandwidth:.6g},B/s,{copy_ms:.4f}\n")
        f.write(f"bf16_gemm,{flops:.6g},FLOP/s,{gemm_ms:.4f}\n")
    os.replace(tmp, a.out)
    print(f"copy {bandwidth / 1e12:.2f} TB/s, bf16 GEMM {flops / 1e12:.0f} TFLOP/s")


if __name__ == "__main__":
    main()
