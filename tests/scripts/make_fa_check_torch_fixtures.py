#!/usr/bin/env python3
"""Writes the saved cases fa_check_torch_test.py rechecks (tests/scripts/data/fa_check_torch/): case folders
as scripts/fa_check_torch.py saves them, with outputs from the independent numpy implementation
(tests/numerics/diagnosis/independent_attention.py) standing in for a PyTorch callable. Rerun it only when
the case format changes: python3 tests/scripts/make_fa_check_torch_fixtures.py
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "numerics", "diagnosis"))
from independent_attention import Impl, attention, round_to  # noqa: E402

OUT = os.path.join(HERE, "data", "fa_check_torch")


def write(name, impl, shape, causal_align, backward=False, seed=1):
    b, hq, hkv, nq, nk, d = shape
    rng = np.random.default_rng(seed)
    q, k, v, do = (round_to(impl.dtype, rng.normal(0, 1, s)) for s in
                   ((b, hq, nq, d), (b, hkv, nk, d), (b, hkv, nk, d), (b, hq, nq, d)))
    out = attention(impl, q, k, v, do if backward else None)
    folder = os.path.join(OUT, name)
    os.makedirs(folder, exist_ok=True)
    tensors = dict(q=q, k=k, v=v, o=out["o"], lse=out["lse"])
    if backward:
        tensors.update(do=do, dq=out["dq"], dk=out["dk"], dv=out["dv"])
    for key, t in tensors.items():
        np.save(os.path.join(folder, key + ".npy"), t.astype(np.float32))
    case = dict(name=name, callable="independent_attention (numpy)", family="normal", dtype=impl.dtype,
                causal=impl.causal, causal_align=causal_align,
                shape=dict(batch=b, heads_q=hq, heads_kv=hkv, seqlen_q=nq, seqlen_k=nk, head_dim=d),
                seed=seed, command="tests/scripts/make_fa_check_torch_fixtures.py")
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(case, f, indent=1)


def main():
    write("gqa-bf16-backward", Impl(dtype="bf16", block_m=16, block_n=24), (1, 4, 2, 40, 40, 16),
          "bottom-right", backward=True)
    # PyTorch's is_causal=True with N_q != N_k (top-left), checked under fa-check's bottom-right default and
    # under --causal-align top-left.
    top_left = Impl(dtype="bf16", block_m=16, block_n=16, causal=True, top_left=True)
    write("sdpa-is-causal-checked-bottom-right", top_left, (1, 2, 2, 24, 56, 16), "bottom-right", seed=2)
    write("sdpa-is-causal-checked-top-left", top_left, (1, 2, 2, 24, 56, 16), "top-left", seed=2)


if __name__ == "__main__":
    main()
