#!/usr/bin/env python3
"""Writes the independent diagnosis corpus: correct and buggy attention outputs of independent_attention.py
(numpy, no code shared with numerics/emulator) as .npy files, one folder per case, with case.json saying what
fa-check must answer (pass, or the id it must name first).

Each case draws its legitimate implementation choices (block sizes incl. non-powers of two, key order, exp or
exp2, P rounding, split-KV, dtype) and its shape (n_q != n_k, causal, GQA) from its own seed; the inputs are
chosen so that the bug acts (the bug's input family: a running max that rises late, all-negative rows, fully
masked rows, a partial key tail).

usage: independent_corpus.py OUT_DIR [--seeds N]
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from independent_attention import Impl, attention, round_to  # noqa: E402

FORWARD_BUGS = ["unrescaled-o", "unrescaled-l", "m-init-zero", "normalize-in-loop", "stale-max",
                "missing-scale", "exp-base-mismatch", "causal-diagonal", "masked-row-nan", "tail-unmasked",
                "lse-without-max"]
BACKWARD_BUGS = ["bwd-missing-delta", "bwd-dk-missing-scale", "bwd-dq-overwrite", "bwd-p-without-l"]
# Interface mistakes: (id fa-check must name, what is done wrong).
# A softmax scale of 1 is the output of missing-scale (the same numbers), so that case expects that id.
INTERFACE_MISTAKES = ["causal-top-left", "scale-1-over-d", "scale-one", "layout-bnhd", "kv-swapped",
                      "gqa-interleaved", "lse-log2", "dropout-on", "wrong-head"]
EXPECTED_ID = {"scale-one": "missing-scale"}

BLOCKS = [16, 24, 32, 40, 48, 64, 80, 128]


def draw_impl(rng, dtype=None, **fixed):
    impl = Impl(dtype=dtype or str(rng.choice(["bf16", "fp16"])),
                block_m=int(rng.choice(BLOCKS)), block_n=int(rng.choice(BLOCKS)),
                reverse_keys=bool(rng.random() < 0.3), exp2=bool(rng.random() < 0.6),
                round_p=bool(rng.random() < 0.7), splits=1 if rng.random() < 0.8 else 2)
    for key, value in fixed.items():
        setattr(impl, key, value)
    return impl


def draw_shape(rng, causal=None, nq=None, nk=None, gqa=None, d=None):
    d = d or int(rng.choice([32, 64]))
    hkv = int(rng.choice([1, 2]))
    gqa = bool(rng.random() < 0.4) if gqa is None else gqa
    hq = hkv * (2 if gqa else 1)
    b = int(rng.choice([1, 2]))
    nq = nq or int(rng.integers(40, 129))
    nk = nk or (nq if rng.random() < 0.5 else int(rng.integers(40, 129)))
    causal = bool(rng.random() < 0.5) if causal is None else causal
    return dict(b=b, hq=hq, hkv=hkv, nq=nq, nk=nk, d=d, causal=causal)


def normal_inputs(rng, shape, q_std=1.0):
    b, hq, hkv, nq, nk, d = (shape[x] for x in ("b", "hq", "hkv", "nq", "nk", "d"))
    q = rng.normal(0, q_std, (b, hq, nq, d))
    k = rng.normal(0, 1, (b, hkv, nk, d))
    v = rng.normal(0, 1, (b, hkv, nk, d))
    return q, k, v


def rising_max_inputs(rng, shape):
    """The running max rises late: key j's alignment with every query grows along the sequence, so a row's
    maximum moves into a later key block (the unrescaled and stale-max bugs act only when it does)."""
    q, k, v = normal_inputs(rng, shape)
    d, nk = shape["d"], shape["nk"]
    direction = rng.normal(0, 1, d)
    direction /= np.linalg.norm(direction)
    ramp = np.linspace(0, 3.0 * np.sqrt(d), nk)[None, None, :, None]
    k = k + ramp * direction[None, None, None, :]
    q = q + 0.8 * direction[None, None, None, :]
    return q, k, v


def all_negative_inputs(rng, shape):
    """Every other query row sees only keys with scaled scores far below 0 (< -150): exp underflows to 0
    in fp32 unless the running max is taken from the scores themselves."""
    q, k, v = normal_inputs(rng, shape)
    d = shape["d"]
    u = np.zeros(d)
    u[0] = 1.0
    a = np.sqrt(200.0 * np.sqrt(d))
    q[:, :, ::2, :] = 0.3 * q[:, :, ::2, :] + a * u
    k = 0.3 * k - a * u
    return q, k, v


def shifted_negative_inputs(rng, shape):
    """Scores between about -6 and -2: a zero-padded key scored 0 would dominate the row."""
    q, k, v = normal_inputs(rng, shape, q_std=0.3)
    d = shape["d"]
    u = np.zeros(d)
    u[0] = 1.0
    q = q + 2.0 * u
    k = k - 2.0 * np.sqrt(d) / 2.0 * u
    return q, k, v


def input_family_for(bug):
    if bug in ("unrescaled-o", "unrescaled-l", "normalize-in-loop", "stale-max", "bwd-dq-overwrite"):
        return rising_max_inputs
    if bug == "m-init-zero":
        return all_negative_inputs
    if bug == "tail-unmasked":
        return shifted_negative_inputs
    return normal_inputs


def shape_for(rng, bug, impl):
    if bug == "masked-row-nan":
        # N_q > N_k with N_q - N_k not a multiple of kBlockM, so a query tile mixes masked and visible rows.
        nk = int(rng.integers(48, 97))
        nq = nk + int(rng.integers(8, 40))
        while (nq - nk) % impl.block_m == 0:
            nq += 1
        return draw_shape(rng, causal=True, nq=nq, nk=nk)
    if bug == "causal-diagonal":
        return draw_shape(rng, causal=True)
    if bug == "tail-unmasked":
        shape = draw_shape(rng, causal=False)
        while shape["nk"] % impl.block_n == 0:
            shape["nk"] += 1
        return shape
    if bug in ("unrescaled-o", "unrescaled-l", "normalize-in-loop", "stale-max", "bwd-dq-overwrite"):
        shape = draw_shape(rng, causal=False)
        shape["nk"] = max(shape["nk"], 2 * impl.block_n + 1)  # at least three key blocks
        if bug.startswith("bwd-"):
            shape.update(b=1, nq=min(shape["nq"], 96))
        return shape
    if bug.startswith("bwd-"):
        # Small: the backward diagnosis replays whole heads.
        shape = draw_shape(rng, nq=int(rng.integers(40, 97)), nk=int(rng.integers(40, 97)))
        shape["b"] = 1
        return shape
    return draw_shape(rng)


def write_case(root, name, impl, shape, q, k, v, do, expect, kind, transform=None, swap_kv=False):
    """Rounds the inputs to impl.dtype, runs the implementation (handed V for K and K for V with swap_kv),
    applies `transform` (an interface mistake made after the call) and writes the files."""
    dt = impl.dtype
    q, k, v = (round_to(dt, x) for x in (q, k, v))
    do = round_to(dt, do) if do is not None else None
    impl.causal = shape["causal"]
    out = attention(impl, q, v, k, do) if swap_kv else attention(impl, q, k, v, do)
    if transform:
        out = transform(out)
    path = os.path.join(root, name)
    os.makedirs(path, exist_ok=True)
    store = np.float16 if dt == "fp16" else np.float32  # bf16 values travel as float32
    tensors = dict(q=q, k=k, v=v, o=out["o"], lse=out["lse"])
    if do is not None:
        tensors.update(do=do, dq=out["dq"], dk=out["dk"], dv=out["dv"])
    for key, value in tensors.items():
        np.save(os.path.join(path, key + ".npy"), value.astype(np.float32 if key == "lse" else store))
    claimed = "fp8_" + impl.fp8 if impl.fp8 else dt  # FP8: bf16 inputs, quantised by the implementation
    args = ["--dtype", claimed] + (["--causal"] if shape["causal"] else [])
    with open(os.path.join(path, "case.json"), "w") as f:
        json.dump(dict(name=name, kind=kind, expect=expect, args=args, files=sorted(tensors),
                       impl={k_: v_ for k_, v_ in vars(impl).items()}, shape=shape), f, indent=1)


def bug_cases(root, seeds):
    n = 0
    for seed in range(seeds):
        for i, bug in enumerate(FORWARD_BUGS + BACKWARD_BUGS):
            rng = np.random.default_rng(1000 * seed + i)
            fixed = {"exp2": True} if bug == "exp-base-mismatch" else {}
            impl = draw_impl(rng, **fixed)
            impl.bug = bug
            shape = shape_for(rng, bug, impl)
            q, k, v = input_family_for(bug)(rng, shape)
            backward = bug.startswith("bwd-")
            do = rng.normal(0, 1, q.shape) if backward else None
            write_case(root, f"{bug}-s{seed}", impl, shape, q, k, v, do, bug, "bwd" if backward else "fwd")
            n += 1
    return n


FP8_BUGS = ["fp8-missing-descale", "fp8-p-overflow"]


def draw_fp8(rng, impl):
    """FP8 operands (forward only) on a bf16-output implementation: format and scaling from the seed."""
    impl.dtype = "bf16"
    impl.fp8 = str(rng.choice(["e4m3", "e5m2"]))
    impl.fp8_scaling = str(rng.choice(["per_tensor", "per_block"]))
    impl.fp8_block_rows = impl.block_n  # the tile a kernel loads
    return impl


def fp8_cases(root, seeds, correct):
    """FP8 forward outputs: every FP8 bug (kind "fp8") and every forward bug (kind "fp8-fwd"), each format and
    scaling drawn per case, and correct FP8 outputs (kind "correct": no false positive allowed)."""
    for seed in range(seeds):
        for i, bug in enumerate(FP8_BUGS + FORWARD_BUGS):
            rng = np.random.default_rng(70000 + 1000 * seed + i)
            impl = draw_fp8(rng, draw_impl(rng, **({"exp2": True} if bug == "exp-base-mismatch" else {})))
            impl.bug = bug
            shape = shape_for(rng, bug, impl)
            q, k, v = input_family_for(bug)(rng, shape)
            write_case(root, f"fp8-{bug}-s{seed}", impl, shape, q, k, v, None, bug,
                       "fp8" if bug in FP8_BUGS else "fp8-fwd")
    families = [normal_inputs, rising_max_inputs, all_negative_inputs, shifted_negative_inputs]
    for seed in range(correct):
        rng = np.random.default_rng(80000 + seed)
        impl = draw_fp8(rng, draw_impl(rng))
        shape = draw_shape(rng)
        if seed % 3 == 2:
            shape.update(causal=True, nq=shape["nk"] + 17)
        q, k, v = families[seed % len(families)](rng, shape)
        write_case(root, f"fp8-correct-s{seed}", impl, shape, q, k, v, None, None, "correct")


def correct_cases(root, seeds):
    families = [normal_inputs, rising_max_inputs, all_negative_inputs, shifted_negative_inputs]
    for seed in range(seeds):
        rng = np.random.default_rng(50000 + seed)
        impl = draw_impl(rng)
        shape = draw_shape(rng)
        if seed % 3 == 2:  # fully masked rows: causal with N_q > N_k
            shape.update(causal=True, nq=shape["nk"] + 17)
        q, k, v = families[seed % len(families)](rng, shape)
        do = rng.normal(0, 1, q.shape) if seed % 2 == 0 else None
        write_case(root, f"correct-s{seed}", impl, shape, q, k, v, do, None, "correct")


def interface_cases(root, seeds):
    for seed in range(seeds):
        for i, mistake in enumerate(INTERFACE_MISTAKES):
            rng = np.random.default_rng(90000 + 100 * seed + i)
            impl = draw_impl(rng)
            shape = draw_shape(rng)
            transform = None
            if mistake == "causal-top-left":
                shape.update(causal=True, nk=shape["nq"] + int(rng.integers(16, 64)))
                impl.top_left = True
            elif mistake == "scale-1-over-d":
                impl.scale = 1.0 / shape["d"]
            elif mistake == "scale-one":
                impl.scale = 1.0
            elif mistake == "layout-bnhd":
                shape["hq"] = shape["hkv"] = 2 * shape["hkv"]
                transform = lambda out: dict(
                    out, o=np.ascontiguousarray(out["o"].transpose(0, 2, 1, 3)).reshape(out["o"].shape))
            elif mistake == "kv-swapped":
                shape["nk"] = max(shape["nk"], 32)
            elif mistake == "gqa-interleaved":
                shape.update(hkv=2, hq=4)
                impl.gqa_interleaved = True
            elif mistake == "lse-log2":
                transform = lambda out: dict(out, lse=out["lse"] / np.float32(np.log(2)))
            elif mistake == "dropout-on":
                impl.dropout = 0.1
                impl.seed = seed
                if seed % 2 == 1:  # causal, with rows that see few keys (their errors are far from Gaussian)
                    shape.update(causal=True, nk=max(16, shape["nq"] // 2))
            elif mistake == "wrong-head":
                shape["hq"] = shape["hkv"] = 2
                transform = lambda out: dict(out, o=out["o"][:, ::-1].copy(), lse=out["lse"][:, ::-1].copy())
            q, k, v = normal_inputs(rng, shape)
            write_case(root, f"{mistake}-s{seed}", impl, shape, q, k, v, None,
                       EXPECTED_ID.get(mistake, mistake), "interface", transform=transform,
                       swap_kv=mistake == "kv-swapped")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--seeds", type=int, default=3, help="cases per bug (default 3)")
    parser.add_argument("--correct", type=int, default=18, help="correct cases (default 18)")
    parser.add_argument("--interface-seeds", type=int, default=2,
                        help="cases per interface mistake (default 2)")
    parser.add_argument("--fp8-seeds", type=int, default=1, help="FP8 cases per bug (default 1)")
    parser.add_argument("--fp8-correct", type=int, default=8, help="correct FP8 cases (default 8)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    bug_cases(args.out, args.seeds)
    correct_cases(args.out, args.correct)
    interface_cases(args.out, args.interface_seeds)
    fp8_cases(args.out, args.fp8_seeds, args.fp8_correct)


if __name__ == "__main__":
    main()
