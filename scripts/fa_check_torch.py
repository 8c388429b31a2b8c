#!/usr/bin/env python3
"""fa-check for PyTorch attention: runs any attention callable on generated inputs, saves the .npy files and
runs fa-check on each case, one summary line per case.

  python3 scripts/fa_check_torch.py MODULE:FUNCTION [--fa-check build/bin/fa-check] [--out DIR]
      [--dtypes bf16,fp16] [--shapes quick|default] [--families normal,fa3_outliers,...] [--backward]
      [--layout bhnd|bnhd] [--causal-align bottom-right|top-left]
  python3 scripts/fa_check_torch.py --recheck DIR [--fa-check PATH]     (fa-check on saved cases; no torch)

The callable is called as FUNCTION(q, k, v, causal=..., scale=...) with CUDA tensors (B, H, N, D) (or
(B, N, H, D) with --layout bnhd, as flash_attn_func takes them); K and V carry H_kv heads (GQA when
H_kv < H_q). It returns O, or (O, LSE) with LSE (B, H, N) in natural log. Built in: `sdpa` (PyTorch's
scaled_dot_product_attention; its is_causal is top-left aligned, so its cases run with
--causal-align top-left unless you say otherwise) and `sdpa_lower_right` (the bottom-right mask through
torch.nn.attention.bias.causal_lower_right, FlashAttention's convention and fa-check's default).

Each case folder holds q, k, v, o[, lse][, do, dq, dk, dv].npy and case.json (shape, dtype, causal, the
alignment, the family, the command); --recheck reruns fa-check on every case folder under DIR, which is how
this script's own test runs without torch. Exit 0 when every case passes, 1 when one fails, 2 on bad input.
"""
import argparse
import importlib
import json
import math
import os
import subprocess
import sys

DTYPES = ("bf16", "fp16")
FAMILIES = ("normal", "fa3_outliers", "max_in_last_block", "all_negative")
# (batch, heads_q, heads_kv, n_q, n_k, head_dim, causal)
SHAPES = {
    "quick": [(1, 2, 2, 128, 128, 64, False), (1, 4, 2, 96, 160, 64, True)],
    "default": [(2, 4, 4, 256, 256, 64, False), (2, 4, 4, 256, 256, 128, True), (1, 8, 2, 192, 320, 64, True),
                (1, 4, 4, 320, 192, 128, True), (1, 2, 1, 257, 257, 256, False)],
}


def fail(message):
    print(f"fa_check_torch: {message}", file=sys.stderr)
    sys.exit(2)


# ---- recheck: fa-check on saved case folders (no torch) ----

def fa_check_command(fa_check, case_dir, case):
    cmd = [fa_check, "--dtype", case["dtype"], "--json", os.path.join(case_dir, "fa-check.json")]
    if case["causal"]:
        cmd += ["--causal", "--causal-align", case.get("causal_align", "bottom-right")]
    for name in ("q", "k", "v", "o", "lse", "do", "dq", "dk", "dv"):
        path = os.path.join(case_dir, name + ".npy")
        if os.path.exists(path):
            cmd += ["--" + name, path]
    return cmd


def summary_line(name, report):
    outputs = report.get("outputs", {})
    worst = max((o.get("worst_error_over_bound", 0.0) for o in outputs.values()), default=0.0)
    line = f"{name}: {report['verdict'].upper()} (worst error {worst:.3g} x bound)"
    diagnosis = report.get("diagnosis", [])
    if report["verdict"] == "fail":
        if diagnosis:
            first = diagnosis[0]
            line += f"; diagnosis: {first['id']}"
            if first.get("fix"):
                line += f"; fix: {first['fix']}"
        else:
            line += "; diagnosis: no known signature"
    return line


def check_case(fa_check, case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    proc = subprocess.run(fa_check_command(fa_check, case_dir, case), capture_output=True, text=True)
    if proc.returncode not in (0, 1):
        return False, f"{case['name']}: fa-check exit {proc.returncode}: {proc.stderr.strip()}"
    with open(os.path.join(case_dir, "fa-check.json")) as f:
        report = json.load(f)
    return report["verdict"] == "pass", summary_line(case["name"], report)


def check_all(fa_check, root):
    if not os.path.isdir(root):
        fail(f"--recheck {root}: no such folder")
    cases = sorted(d for d in os.listdir(root) if os.path.exists(os.path.join(root, d, "case.json")))
    if not cases:
        fail(f"--recheck {root}: no case folder (a folder with case.json) in it")
    all_pass = True
    for name in cases:
        ok, line = check_case(fa_check, os.path.join(root, name))
        print(line, flush=True)
        all_pass = all_pass and ok
    return 0 if all_pass else 1


# ---- run: the callable on generated inputs (needs torch and a GPU) ----

def builtin_names():
    return ["sdpa", "sdpa_lower_right"]


def builtin(name):
    if name not in builtin_names():
        return None
    import torch.nn.functional as F

    def grouped(q, k, v):
        # GQA by repeating K and V per group (query head h reads key/value head h // group): works on every
        # PyTorch 2.x, where enable_gqa= needs 2.5.
        group = q.shape[1] // k.shape[1]
        return (k, v) if group == 1 else (k.repeat_interleave(group, dim=1),
                                          v.repeat_interleave(group, dim=1))

    def sdpa(q, k, v, causal=False, scale=None):
        k, v = grouped(q, k, v)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

    def sdpa_lower_right(q, k, v, causal=False, scale=None):
        from torch.nn.attention.bias import causal_lower_right
        k, v = grouped(q, k, v)
        mask = causal_lower_right(q.shape[2], k.shape[2]) if causal else None
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)

    return {"sdpa": sdpa, "sdpa_lower_right": sdpa_lower_right}.get(name)


def load_callable(spec):
    fn = builtin(spec)
    if fn:
        return fn
    if ":" not in spec:
        fail(f"{spec} is not allowed (MODULE:FUNCTION, or a built-in: sdpa, sdpa_lower_right)")
    module, function = spec.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        return getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as e:
        fail(f"{spec}: {e}")


def make_inputs(family, shape, seed):
    """Inputs of one family as float32 numpy arrays (B, H, N, D), seeded: q, k, v, do. numpy, not torch, so
    that the families are the same on every machine and tested where there is no torch."""
    import numpy as np
    b, hq, hkv, nq, nk, d, causal = shape
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((b, hq, nq, d))
    k = rng.standard_normal((b, hkv, nk, d))
    v = rng.standard_normal((b, hkv, nk, d))
    if family == "fa3_outliers":  # FlashAttention-3's: N(0,1) + N(0,100) * Bernoulli(0.001)
        for t in (q, k, v):
            t += 10.0 * rng.standard_normal(t.shape) * (rng.random(t.shape) < 0.001)
    elif family == "max_in_last_block":  # the maximum moves late: keys align with queries along the sequence
        direction = rng.standard_normal(d)
        direction /= np.linalg.norm(direction)
        k += np.linspace(0, 3 * math.sqrt(d), nk)[None, None, :, None] * direction
        q += 0.8 * direction
    elif family == "all_negative":  # every scaled score far below 0
        a = math.sqrt(200.0 * math.sqrt(d))
        q = 0.3 * q
        q[..., 0] += a
        k = 0.3 * k
        k[..., 0] -= a
    elif family != "normal":
        fail(f"--families {family} is not allowed ({', '.join(FAMILIES)})")
    do = rng.standard_normal((b, hq, nq, d))
    return tuple(t.astype(np.float32) for t in (q, k, v, do))


def plan_cases(shapes, families, dtypes):
    """(name, family, shape, dtype, seed) of every case, seeds 1, 2, ... in order; names unique."""
    cases = []
    for shape in shapes:
        for family in families:
            for dtype in dtypes:
                b, hq, hkv, nq, nk, d, causal = shape
                name = f"{family}-{dtype}-b{b}h{hq}kv{hkv}-q{nq}k{nk}d{d}{'-causal' if causal else ''}"
                cases.append((name, family, shape, dtype, len(cases) + 1))
    return cases


def causal_alignment(callable_spec, causal_align):
    """The convention fa-check checks a case under: the user's, else PyTorch's top-left for the `sdpa`
    built-in (is_causal=True), else FlashAttention's bottom-right."""
    return causal_align or ("top-left" if callable_spec == "sdpa" else "bottom-right")


def save_case(case_dir, arrays, dtype, record):
    """Writes NAME.npy for each numpy array (fp16 cases in float16, bf16 values as float32, LSE always
    float32) and case.json (`record`)."""
    import numpy as np
    os.makedirs(case_dir, exist_ok=True)
    for key, a in arrays.items():
        a = np.asarray(a, dtype=np.float32)
        np.save(os.path.join(case_dir, key + ".npy"),
                a.astype(np.float16) if dtype == "fp16" and key != "lse" else a)
    with open(os.path.join(case_dir, "case.json"), "w") as f:
        json.dump(record, f, indent=1)


def case_record(name, callable_spec, family, shape, dtype, seed, align):
    b, hq, hkv, nq, nk, d, causal = shape
    return dict(name=name, callable=callable_spec, family=family, dtype=dtype, causal=causal,
                causal_align=align, shape=dict(batch=b, heads_q=hq, heads_kv=hkv, seqlen_q=nq, seqlen_k=nk,
                                               head_dim=d), seed=seed, command=" ".join(sys.argv))


def to_numpy(t):
    return t.detach().float().cpu().numpy()


def run_case(torch, fn, args, name, family, shape, dtype, seed):
    b, hq, hkv, nq, nk, d, causal = shape
    torch_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    q, k, v, do = (torch.from_numpy(t).to("cuda", torch_dtype) for t in make_inputs(family, shape, seed))
    if args.backward:
        for t in (q, k, v):
            t.requires_grad_(True)
    to_callee = (lambda t: t.transpose(1, 2).contiguous()) if args.layout == "bnhd" else (lambda t: t)
    scale = 1.0 / math.sqrt(d)
    result = fn(to_callee(q), to_callee(k), to_callee(v), causal=causal, scale=scale)
    o, lse = (result[0], result[1]) if isinstance(result, (tuple, list)) else (result, None)
    if args.layout == "bnhd":
        o = o.transpose(1, 2)
    tensors = dict(q=q, k=k, v=v, o=o)
    if lse is not None:
        tensors["lse"] = lse
    if args.backward:
        o.backward(do)
        tensors.update(do=do, dq=q.grad, dk=k.grad, dv=v.grad)
    case_dir = os.path.join(args.out, name)
    align = causal_alignment(args.callable, args.causal_align)
    save_case(case_dir, {key: to_numpy(t) for key, t in tensors.items()}, dtype,
              case_record(name, args.callable, family, shape, dtype, seed, align))
    return check_case(args.fa_check, case_dir)


def validate(args):
    """Every option checked before torch is imported or a GPU touched: one line and exit 2 on bad input."""
    for dt in args.dtypes.split(","):
        if dt not in DTYPES:
            fail(f"--dtypes {dt} is not allowed ({', '.join(DTYPES)})")
    for family in args.families.split(","):
        if family not in FAMILIES:
            fail(f"--families {family} is not allowed ({', '.join(FAMILIES)})")
    if args.callable not in builtin_names() and ":" not in args.callable:
        fail(f"{args.callable} is not allowed (MODULE:FUNCTION, or a built-in: {', '.join(builtin_names())})")


def run_all(args):
    validate(args)
    try:
        import torch
    except ImportError:
        fail("torch is not installed here (run on the GPU machine, or --recheck saved cases)")
    if not torch.cuda.is_available():
        print("fa_check_torch: no CUDA device", file=sys.stderr)
        return 3
    fn = load_callable(args.callable)
    all_pass = True
    for name, family, shape, dtype, seed in plan_cases(SHAPES[args.shapes], args.families.split(","),
                                                       args.dtypes.split(",")):
        ok, line = run_case(torch, fn, args, name, family, shape, dtype, seed)
        print(line, flush=True)
        all_pass = all_pass and ok
    return 0 if all_pass else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("callable", nargs="?", help="MODULE:FUNCTION, or sdpa / sdpa_lower_right")
    parser.add_argument("--recheck", help="rerun fa-check on the case folders under this folder (no torch)")
    parser.add_argument("--fa-check", default="build/bin/fa-check")
    parser.add_argument("--out", default="fa-check-torch")
    parser.add_argument("--dtypes", default="bf16,fp16")
    parser.add_argument("--shapes", default="default", choices=sorted(SHAPES))
    parser.add_argument("--families", default="normal,fa3_outliers,max_in_last_block")
    parser.add_argument("--backward", action="store_true", help="also check dQ, dK, dV (autograd)")
    parser.add_argument("--layout", default="bhnd", choices=["bhnd", "bnhd"])
    parser.add_argument("--causal-align", choices=["bottom-right", "top-left"],
                        help="the callable's causal convention "
                             "(default: top-left for sdpa, else bottom-right)")
    args = parser.parse_args()
    if not os.path.exists(args.fa_check):
        fail(f"--fa-check {args.fa_check}: no such file (build fa-check first)")
    if args.recheck:
        return check_all(args.fa_check, args.recheck)
    if not args.callable:
        fail("give MODULE:FUNCTION (or --recheck DIR)")
    return run_all(args)


if __name__ == "__main__":
    sys.exit(main())
