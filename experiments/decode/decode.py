#!/usr/bin/env python3
"""decode: attention with a few query rows against a long KV cache, timed by the project protocol (events,
warm-up, median of 30, two input sets rotated) for PyTorch's backends (FLASH_ATTENTION, CUDNN_ATTENTION,
MATH). Decode is memory-bound: the figure of merit is the K/V bytes read per second against the copy
bandwidth, and the question is how much of the GPU one query block per (batch, head) leaves idle.
Non-causal (every query row sees the whole cache), bf16, layout (B, H, N, D).
GQA: --heads-kv H (a divisor of --heads) passes enable_gqa=True; a backend that cannot run it is skipped.
Usage: decode.py --out decode.csv [--batch 1] [--heads 16] [--heads-kv 16] [--head-dim 128] [--nq 1,2,4,8,16]
                 [--nk 4096,...,131072] [--backends flash,cudnn,math]"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from peers import BACKENDS, time_call, write_rows  # noqa: E402  (the one timing protocol)
from headline import attention_flops  # noqa: E402  (experiments/headline.py)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--heads-kv", type=int, default=0, help="key/value heads (default: --heads)")
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--nq", default="1,2,4,8,16")
    ap.add_argument("--nk", default="4096,8192,16384,32768,65536,131072")
    ap.add_argument("--backends", default="flash,cudnn,math")
    a = ap.parse_args()
    b, h, d = a.batch, a.heads, a.head_dim
    hkv = a.heads_kv or h
    if h % hkv:
        sys.exit(f"decode.py: --heads-kv {hkv} does not divide --heads {h}")
    gqa = {"enable_gqa": True} if hkv != h else {}
    rows = []
    for nk in map(int, a.nk.split(",")):
        gen = torch.Generator(device="cuda").manual_seed(nk)
        kv = [tuple(torch.randn(b, hkv, nk, d, device="cuda", dtype=torch.bfloat16, generator=gen)
                    for _ in range(2))
              for _ in range(2)]
        for nq in map(int, a.nq.split(",")):
            qs = [torch.randn(b, h, nq, d, device="cuda", dtype=torch.bfloat16, generator=gen)
                  for _ in range(2)]
            sets = [(qs[i], kv[i][0], kv[i][1]) for i in range(2)]
            kv_bytes = 2 * b * hkv * nk * d * 2
            flops = attention_flops(b, h, nq, nk, d)
            for name in a.backends.split(","):
                backend = BACKENDS[name]

                def call(s):
                    with sdpa_kernel(backend):
                        return F.scaled_dot_product_attention(s[0], s[1], s[2], **gqa)
                try:
                    med, p20, p80 = time_call(call, sets)
                except (RuntimeError, TypeError) as e:  # TypeError: a torch without enable_gqa
                    print(f"{name} nq{nq} nk{nk}: {str(e).splitlines()[0]}", file=sys.stderr)
                    torch.cuda.empty_cache()
                    continue
                rows.append(dict(backend=name, batch=b, heads=h, heads_kv=hkv, head_dim=d, nq=nq, nk=nk,
                                 median_ms=med, p20_ms=p20, p80_ms=p80, kv_gbps=kv_bytes / med / 1e6,
                                 tflops=flops / med / 1e9))
                print(f"{name:6s} nq {nq:3d} nk {nk:7d} {med:8.4f} ms  K/V {kv_bytes / med / 1e6:7.0f} GB/s")
        del kv
        torch.cuda.empty_cache()
    if not rows:
        sys.exit("decode.py: no backend ran")
    write_rows(a.out, rows)


if __name__ == "__main__":
    main()
