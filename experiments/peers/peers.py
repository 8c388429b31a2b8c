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
                [--settle-ms MS]
--settle-ms keeps calling, untimed, for MS after the warm-ups, as fa-bench --settle-ms does: under 5 warm-ups
a short call is timed at the boost clock, before the power cap's first step (experiments/card_transfer).
--memory adds the peak device memory a call allocates beyond its inputs (torch.cuda.max_memory_allocated
after reset_peak_memory_stats, minus what was allocated before): extra_fwd_bytes for the forward and
extra_fwdbwd_bytes for forward + backward of one input set. --memory-only measures that alone (one call,
then the measured one; no timed runs: the time columns stay empty), for experiments/memory_vs_n. A backend
that fails (out of memory, no kernel for the shape) is reported on stderr and left out; the other rows still
come.
"""
import argparse
import csv
import dataclasses
import datetime
import math
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)
from headline import attention_flops, headline_shape  # noqa: E402  (experiments/headline.py)

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

BACKENDS = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION, "math": SDPBackend.MATH}
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def quantile(sorted_values, q):
    return sorted_values[round(q * (len(sorted_values) - 1))]


def settle(fn, sets, settle_ms):
    """Calls fn, untimed, in batches that end with a synchronize, until settle_ms of wall time have passed:
    the timed runs then start at the clock the card's power cap settles to, as fa-bench --settle-ms does
    (tuner/run/timing.hpp: a batch sized from the last one's time per call, at most doubling)."""
    until = time.monotonic() + settle_ms / 1000
    batch, i = 1, 0
    while (now := time.monotonic()) < until:
        for _ in range(batch):
            fn(sets[i % len(sets)])
            i += 1
        torch.cuda.synchronize()
        per_call = max((time.monotonic() - now) / batch, 1e-9)
        batch = max(1, min(2 * batch, math.ceil((until - time.monotonic()) / per_call)))


def time_call(fn, sets, warmup=5, runs=30, settle_ms=0):
    for i in range(warmup):
        fn(sets[i % len(sets)])
    if settle_ms:
        settle(fn, sets, settle_ms)
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


UNTIMED = ("", "", "")  # median, p20, p80 of a row measured for its memory only


@dataclasses.dataclass
class Problem:
    """One shape of one dtype and mask, as a row of the CSV names it."""

    dtype_name: str
    head_dim: int
    seqlen: int
    batch: int
    heads: int
    causal: bool

    def flops(self, backward=False):
        n = self.seqlen
        return attention_flops(self.batch, self.heads, n, n, self.head_dim, self.causal, backward=backward)

    def row(self, backend, direction, timing, tflops, fwd_bytes="", fwdbwd_bytes=""):
        median, p20, p80 = timing
        return dict(backend=backend, dtype=self.dtype_name, head_dim=self.head_dim, seqlen=self.seqlen,
                    mask="causal" if self.causal else "full", direction=direction, median_ms=median,
                    p20_ms=p20, p80_ms=p80, tflops=tflops, batch=self.batch, heads=self.heads,
                    extra_fwd_bytes=fwd_bytes, extra_fwdbwd_bytes=fwdbwd_bytes)


def write_rows(path, rows):
    """rows (dicts, same keys) as CSV under a '# GPU torch cuDNN date' line; temporary name, renamed."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        f.write(f"# {torch.cuda.get_device_name()} torch {torch.__version__} "
                f"cudnn {torch.backends.cudnn.version()} {datetime.date.today().isoformat()}\n")
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


def attend(backend, q, k, v, causal):
    with sdpa_kernel(backend):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def with_grad(input_set):
    """Fresh leaf copies of q, k, v that record the graph the backward runs through."""
    return tuple(t.detach().clone().requires_grad_() for t in input_set[:3])


def forward_and_backward(backend, input_set, causal):
    q, k, v = with_grad(input_set)
    out = attend(backend, q, k, v, causal)
    torch.autograd.grad(out, (q, k, v), input_set[3])


def forward_row(problem, name, backend, sets, args):
    def forward(s):
        return attend(backend, s[0], s[1], s[2], problem.causal)
    if args.memory_only:
        # One call first, so that one-time allocations (plans, workspaces) are not counted, as the timed
        # path's warm-ups ensure.
        forward(sets[0])
        timing, tflops = UNTIMED, ""
    else:
        timing = time_call(forward, sets, settle_ms=args.settle_ms)
        tflops = problem.flops() / timing[0] / 1e9
    memory = extra_memory(lambda: forward(sets[0])) if args.memory else ""
    return problem.row(name, "fwd", timing, tflops, fwd_bytes=memory)


def backward_row(problem, name, backend, sets, args):
    """The backward's row; its forward + backward memory also belongs in the forward's row."""
    if args.memory_only:
        forward_and_backward(backend, sets[0], problem.causal)  # one-time allocations first
        memory = extra_memory(lambda: forward_and_backward(backend, sets[0], problem.causal))
        return problem.row(name, "bwd", UNTIMED, "", fwdbwd_bytes=memory)
    # One graph per input set, built before the timing: only the backward is timed.
    graphs = []
    for s in sets:
        q, k, v = with_grad(s)
        graphs.append((attend(backend, q, k, v, problem.causal), s[3], (q, k, v)))
    timing = time_call(lambda g: torch.autograd.grad(g[0], g[2], g[1], retain_graph=True), graphs,
                       settle_ms=args.settle_ms)
    del graphs
    memory = ""
    if args.memory:
        memory = extra_memory(lambda: forward_and_backward(backend, sets[0], problem.causal))
    tflops = problem.flops(backward=True) / timing[0] / 1e9
    return problem.row(name, "bwd", timing, tflops, fwdbwd_bytes=memory)


def attempt(problem, name, direction, measure):
    """measure(), or None when the backend fails on this shape: reported on stderr, its memory released."""
    try:
        return measure()
    except RuntimeError as e:
        message = str(e).splitlines()[0]
    # Out of the except block: the traceback, and the tensors its frames hold, are gone by now.
    print(f"{name} {problem.dtype_name} d{problem.head_dim} n{problem.seqlen} {direction}: {message}",
          file=sys.stderr)
    torch.cuda.empty_cache()
    return None


def input_sets(problem, dtype, count):
    """count sets of q, k, v and dO, each drawn from a generator seeded by the shape."""
    b, h, n, d = problem.batch, problem.heads, problem.seqlen, problem.head_dim
    gen = torch.Generator(device="cuda").manual_seed(n * 1000 + d)
    sets = []
    for _ in range(count):
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=dtype, generator=gen) for _ in range(3))
        sets.append((q, k, v, torch.randn_like(q)))
    return sets


def parse_args():
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
    ap.add_argument("--memory-only", action="store_true",
                    help="measure the peak extra device memory, not the time")
    ap.add_argument("--input-sets", type=int, default=3,
                    help="input sets rotated (fewer when memory is short)")
    ap.add_argument("--settle-ms", type=int, default=0,
                    help="after the warm-ups, call untimed for this many ms (0..10000) before timing, as "
                         "fa-bench --settle-ms: every call timed at the power cap's settled clock")
    args = ap.parse_args()
    args.memory = args.memory or args.memory_only
    args.backend_names = names_from(args.backends, BACKENDS, "--backends")
    args.dtype_names = names_from(args.dtype, DTYPES, "--dtype")
    args.head_dims = positive_ints(args.head_dim, "--head-dim")
    args.seqlens = positive_ints(args.seqlen, "--seqlen")
    sizes = (("--batch", args.batch), ("--heads", args.heads), ("--input-sets", args.input_sets))
    for option, value in sizes:
        if value is not None and value < 1:
            fail(f"{option} {value}: a positive integer")
    if not 0 <= args.settle_ms <= 10000:
        fail(f"--settle-ms {args.settle_ms}: 0..10000 (as fa-bench's)")
    return args


def names_from(text, known, option):
    """The comma-separated names of text, in order, each once; each one a key of known."""
    names = list(dict.fromkeys(text.split(",")))
    for name in names:
        if name not in known:
            fail(f"{option} {name!r}: use {', '.join(known)}")
    return names


def positive_ints(text, option):
    try:
        values = [int(x) for x in text.split(",")]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        fail(f"{option} {text!r}: comma-separated positive integers")
    return values


def measure_all(args):
    rows = []
    for dtype_name in args.dtype_names:
        for d in args.head_dims:
            for n in args.seqlens:
                b, h = headline_shape(n, d)
                shape = Problem(dtype_name, d, n, args.batch or b, args.heads or h, causal=False)
                sets = input_sets(shape, DTYPES[dtype_name], args.input_sets)
                for causal in (False, True):
                    problem = dataclasses.replace(shape, causal=causal)
                    for name in args.backend_names:
                        rows += measure_backend(problem, name, BACKENDS[name], sets, args)
                del sets
                torch.cuda.empty_cache()
    return rows


def measure_backend(problem, name, backend, sets, args):
    """The forward's row and, with --bwd, the backward's; none where the forward fails."""
    forward = attempt(problem, name, "fwd", lambda: forward_row(problem, name, backend, sets, args))
    if forward is None or not args.bwd:
        return [forward] if forward else []
    backward = attempt(problem, name, "bwd", lambda: backward_row(problem, name, backend, sets, args))
    if backward is None:
        return [forward]
    forward["extra_fwdbwd_bytes"] = backward["extra_fwdbwd_bytes"]
    return [forward, backward]


def main():
    args = parse_args()
    rows = measure_all(args)
    if not rows:
        sys.exit("peers.py: no backend ran on any shape")
    write_rows(args.out, rows)
    for r in rows:
        timed = f"{r['median_ms']:8.3f} ms {r['tflops']:6.1f} TFLOP/s" if r["median_ms"] != "" else "untimed"
        memory = f" extra {r['extra_fwd_bytes'] or r['extra_fwdbwd_bytes']} B" if args.memory else ""
        print(f"{r['backend']:6s} {r['dtype']} d{r['head_dim']:<4d} n{r['seqlen']:<6d} {r['mask']:6s} "
              f"{r['direction']} {timed}{memory}")


if __name__ == "__main__":
    main()
