#!/usr/bin/env python3
"""stability on the GPU: deviation of PyTorch's bf16 attention backends (FLASH_ATTENTION = FlashAttention-2,
CUDNN_ATTENTION, MATH = standard attention with bf16 GEMM outputs) from a float64 reference computed on the
same GPU (MATH backend in float64), against n, after Golden et al. 2024. Inputs N(0, 1) rounded to bf16
(the reference sees the same rounded values, so only the arithmetic deviates), B = 1, H = 16, d = 64,
non-causal. Metrics over all of O: max |O - ref| and RMSE. Usage: stability_gpu.py --out gpu.csv
[--seqlen 256,...,16384] [--dtype bf16,fp16]"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from peers import BACKENDS, DTYPES, write_rows  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seqlen", default="256,512,1024,2048,4096,8192,16384")
    ap.add_argument("--dtype", default="bf16,fp16")
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--head-dim", type=int, default=64)
    a = ap.parse_args()
    rows = []
    for dname in a.dtype.split(","):
        for n in map(int, a.seqlen.split(",")):
            gen = torch.Generator(device="cuda").manual_seed(n)
            q, k, v = (torch.randn(1, a.heads, n, a.head_dim, device="cuda", generator=gen).to(DTYPES[dname])
                       for _ in range(3))
            with sdpa_kernel(SDPBackend.MATH):
                ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double())
            for name, backend in BACKENDS.items():
                try:
                    with sdpa_kernel(backend):
                        out = F.scaled_dot_product_attention(q, k, v).double()
                except RuntimeError as e:
                    print(f"{name} {dname} n{n}: {str(e).splitlines()[0]}", file=sys.stderr)
                    continue
                diff = (out - ref).abs()
                rows.append(dict(backend=name, dtype=dname, seqlen=n, heads=a.heads, head_dim=a.head_dim,
                                 max_abs=diff.max().item(), rmse=diff.pow(2).mean().sqrt().item()))
                print(f"{name:6s} {dname} n{n:6d} max {rows[-1]['max_abs']:.3e} rmse {rows[-1]['rmse']:.3e}")
            del q, k, v, ref
            torch.cuda.empty_cache()
    if not rows:
        sys.exit("stability_gpu.py: no backend ran")
    write_rows(a.out, rows)


if __name__ == "__main__":
    main()
