#!/usr/bin/env python3
"""Peers of our kernels, timed by the project protocol in the same run as fa-bench.

PyTorch's scaled_dot_product_attention with one backend forced: FLASH_ATTENTION (FlashAttention-2 inside
PyTorch), CUDNN_ATTENTION and, with --backends ...,math, MATH (standard attention: S and P materialised,
cuBLAS GEMMs). Layout (B, H, N, D), b = 16384 / n, h = 2048 / d. CUDA events around the
call only, 5 warm-ups, median of 30 with p20/p80, three input sets rotated (each set is 64 MiB per tensor,
so the rotation spans far more than the 60 MB L2). TFLOP/s: forward 4*b*h*n^2*d, halved for causal;
backward 2.5x the forward FLOPs (the FlashAttention convention).

Usage: peers.py --out results.csv [--dtype bf16,fp16] [--head-dim 64,128] [--seqlen 512,...] [--bwd]
                [--backends flash,cudnn,math] [--batch B --heads H] [--memory | --memory-only]
--memory adds the peak device memory a call allocates beyond its inputs (torch.cuda.max_memory_allocated
after reset_peak_memory_stats, minus what was allocated before): extra_fwd_bytes for the forward and
extra_fwdbwd_bytes for forward + backward of one input set. --memory-only measures that alone (one call, then
the measured one; no timed runs: the time columns stay empty), for experiments/memory_vs_n. A backend that fails (out of memory, no kernel
for the shape) is reported on stderr and left out; the other rows still come.
"""
import argparse
import csv
import datetime
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from headline import attention_flops, headline_shape  # noqa: E402  (experiments/headline.py)

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def quantile(sorted_values, q):
    return sorted_values[round(q * (len(sorted_values) - 1))]


def time_call(fn, sets, warmup=5, runs=30):
    for i in range(warmup):
        fn(sets[i % len(sets)])
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for i in range(runs):
        s = sets[i % len(sets)]
        start.record()
        fn(s)
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    ms.sort()
    return statistics.median(ms), quantile(ms, 0.2), quantile(ms, 0.8)


def write_rows(path, rows):
    """rows (dicts with the same keys) as CSV under a '# GPU torch cuDNN date' line: temporary name, renamed."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(f"# {torch.cuda.get_device_name()} torch {torch.__version__} cudnn {torch.backends.cudnn.version()} "
                f"{datetime.date.today().isoformat()}\n")
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


def extra_memory(fn):
    """Peak device memory fn allocates beyond what is allocated before it (bytes)."""
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    fn()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - before


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--head-dim", default="64,128")
    ap.add_argument("--seqlen", default="512,1024,2048,4096,8192,16384")
    ap.add_argument("--bwd", action="store_true", help="also time the backward (dQ, dK, dV from dO)")
    ap.add_argument("--backends", default="flash,cudnn", help="comma-separated: flash, cudnn, math")
    ap.add_argument("--batch", type=int, help="batch size instead of the headline 16384 / n (with --heads)")
    ap.add_argument("--heads", type=int, help="heads instead of the headline 2048 / d")
    ap.add_argument("--memory", action="store_true", help="also measure the peak extra device memory")
    ap.add_argument("--memory-only", action="store_true", help="measure the peak extra device memory, not the time")
    ap.add_argument("--input-sets", type=int, default=3, help="input sets rotated (fewer when memory is short)")
    a = ap.parse_args()
    a.memory = a.memory or a.memory_only
    untimed = ("", "", "")
    backends = {}
    for name in a.backends.split(","):
        if name not in BACKENDS:
            sys.exit(f"peers.py: --backends {name}: use flash, cudnn or math")
        backends[name] = BACKENDS[name]
    rows = []
    for dname in a.dtype.split(","):
        dtype = DTYPES[dname]
        for d in map(int, a.head_dim.split(",")):
            for n in map(int, a.seqlen.split(",")):
                b, h = headline_shape(n, d)
                b, h = a.batch or b, a.heads or h
                gen = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
                sets = []
                for _ in range(a.input_sets):
                    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
                    sets.append((q, k, v, torch.randn_like(q)))
                for causal in (False, True):
                    flops = attention_flops(b, h, n, n, d, causal)
                    bwd_flops = attention_flops(b, h, n, n, d, causal, backward=True)
                    for bname, backend in backends.items():
                        def fwd(s):
                            with sdpa_kernel(backend):
                                return F.scaled_dot_product_attention(s[0], s[1], s[2], is_causal=causal)
                        try:
                            if a.memory_only:
                                # One call first, so that one-time allocations (plans, workspaces) are not counted,
                                # as the timed path's warm-ups ensure.
                                fwd(sets[0])
                                med, p20, p80 = untimed
                            else:
                                med, p20, p80 = time_call(fwd, sets)
                            mem = extra_memory(lambda: fwd(sets[0])) if a.memory else ""
                            rows.append(dict(backend=bname, dtype=dname, head_dim=d, seqlen=n, mask="causal" if causal else "full",
                                             direction="fwd", median_ms=med, p20_ms=p20, p80_ms=p80,
                                             tflops="" if a.memory_only else flops / med / 1e9,
                                             batch=b, heads=h, extra_fwd_bytes=mem, extra_fwdbwd_bytes=""))
                        except RuntimeError as e:
                            print(f"{bname} {dname} d{d} n{n} fwd: {str(e).splitlines()[0]}", file=sys.stderr)
                            torch.cuda.empty_cache()
                            continue
                        if not a.bwd:
                            continue
                        def fwd_bwd(s):
                            qg, kg, vg = (t.detach().clone().requires_grad_() for t in s[:3])
                            with sdpa_kernel(backend):
                                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                            torch.autograd.grad(out, (qg, kg, vg), s[3])
                        if a.memory_only:
                            try:
                                fwd_bwd(sets[0])
                                mem = extra_memory(lambda: fwd_bwd(sets[0]))
                            except RuntimeError as e:
                                print(f"{bname} {dname} d{d} n{n} bwd: {str(e).splitlines()[0]}", file=sys.stderr)
                                torch.cuda.empty_cache()
                                continue
                            rows[-1]["extra_fwdbwd_bytes"] = mem
                            rows.append(dict(backend=bname, dtype=dname, head_dim=d, seqlen=n, mask="causal" if causal else "full",
                                             direction="bwd", median_ms="", p20_ms="", p80_ms="", tflops="",
                                             batch=b, heads=h, extra_fwd_bytes="", extra_fwdbwd_bytes=mem))
                            continue
                        try:
                            grads = []
                            for s in sets:
                                qg, kg, vg = (t.detach().clone().requires_grad_() for t in s[:3])
                                with sdpa_kernel(backend):
                                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal)
                                grads.append((out, s[3], qg, kg, vg))
                            def bwd(g):
                                torch.autograd.grad(g[0], (g[2], g[3], g[4]), g[1], retain_graph=True)
                            med, p20, p80 = time_call(bwd, grads)
                            del grads
                            mem = extra_memory(lambda: fwd_bwd(sets[0])) if a.memory else ""
                            rows[-1]["extra_fwdbwd_bytes"] = mem
                            rows.append(dict(backend=bname, dtype=dname, head_dim=d, seqlen=n, mask="causal" if causal else "full",
                                             direction="bwd", median_ms=med, p20_ms=p20, p80_ms=p80, tflops=bwd_flops / med / 1e9,
                                             batch=b, heads=h, extra_fwd_bytes="", extra_fwdbwd_bytes=mem))
                        except RuntimeError as e:
                            print(f"{bname} {dname} d{d} n{n} bwd: {str(e).splitlines()[0]}", file=sys.stderr)
                            grads = None
                            torch.cuda.empty_cache()
                del sets
                torch.cuda.empty_cache()
    if not rows:
        sys.exit("peers.py: no backend ran on any shape")
    write_rows(a.out, rows)
    for r in rows:
        timed = f"{r['median_ms']:8.3f} ms {r['tflops']:6.1f} TFLOP/s" if r["median_ms"] != "" else "untimed"
        memory = f" extra {r['extra_fwd_bytes'] or r['extra_fwdbwd_bytes']} B" if a.memory else ""
        print(f"{r['backend']:6s} {r['dtype']} d{r['head_dim']:<4d} n{r['seqlen']:<6d} {r['mask']:6s} {r['direction']} "
              f"{timed}{memory}")


if __name__ == "__main__":
    main()
