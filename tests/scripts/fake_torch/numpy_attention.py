"""Attention callables for scripts/fa_check_torch.py's run test, on the numpy stand-in tensors
(fake_torch/torch): float64 softmax attention, the output rounded to the input's dtype. `correct` masks
bottom-right (FlashAttention's convention), `top_left` as PyTorch's is_causal does, `unscaled` forgets the
softmax scale (fa-check must name missing-scale); `correct_bnhd` takes (B, N, H, D)."""
import numpy as np

import torch


def _attention(q, k, v, causal, scale, top_left=False):
    qa, ka, va = (t.array.astype(np.float64) for t in (q, k, v))
    group = qa.shape[1] // ka.shape[1]
    ka, va = np.repeat(ka, group, axis=1), np.repeat(va, group, axis=1)  # GQA: head h reads h // group
    s = np.einsum("bhid,bhjd->bhij", qa, ka) * scale
    nq, nk = s.shape[2], s.shape[3]
    if causal:
        offset = 0 if top_left else nk - nq
        s = np.where(np.arange(nk)[None, :] > np.arange(nq)[:, None] + offset, -np.inf, s)
    m = s.max(axis=3, keepdims=True)
    p = np.exp(s - np.where(np.isfinite(m), m, 0.0))
    l = p.sum(axis=3, keepdims=True)
    o = np.einsum("bhij,bhjd->bhid", p / np.where(l == 0, 1.0, l), va)
    return torch.Tensor(o).to("cuda", q.dtype)


def correct(q, k, v, causal=False, scale=None):
    return _attention(q, k, v, causal, scale)


def top_left(q, k, v, causal=False, scale=None):
    return _attention(q, k, v, causal, scale, top_left=True)


def unscaled(q, k, v, causal=False, scale=None):
    return _attention(q, k, v, causal, 1.0)


def correct_bnhd(q, k, v, causal=False, scale=None):
    """(B, N, H, D) in and out, as flash_attn_func takes them (fa_check_torch.py --layout bnhd)."""
    o = _attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), causal, scale)
    return o.transpose(1, 2)
