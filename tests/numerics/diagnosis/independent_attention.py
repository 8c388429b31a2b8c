"""An attention implementation that shares nothing with numerics/emulator: FlashAttention-2's forward
(Algorithm 1) and backward (Algorithm 2) written from the paper's pseudo-code in plain numpy, with the
choices correct kernels legitimately differ in, and the catalogued bugs written from their one-line
descriptions (numerics/mutants/catalogue.hpp), not from the emulator's code.

Legitimate choices (Impl): query and key block sizes (any, not only powers of two), key-block order,
natural exp of scaled scores or exp2 with scale * log2(e) folded in, P rounded to the input type or kept
in fp32, split-KV (the key blocks in `splits` contiguous chunks, each with its own state and epilogue,
combined through their LSE as flash-decoding does).
Precision: inputs, P and dS rounded to fp16 or bf16 (bf16: round-to-nearest-even on the float32 bits),
every product and sum in fp32 (numpy's float32 matmul), outputs rounded at the end.

FP8 (Impl.fp8 = "e4m3" or "e5m2", forward only: FlashAttention-3 publishes no FP8 backward): Q, K, V are
quantised with a scale that maps the largest magnitude of the tensor (per_tensor) or of each block of
fp8_block_rows rows of a (batch, head) matrix (per_block) onto the format's largest finite value, rounded to
nearest-even with saturation, and descaled inside the score product; P is quantised as FP8 of P * 2^8 (its
largest weight 256) before P V, while l sums the unquantised weights; O is written in bf16 (Impl.dtype).

Layout (B, H, N, D); GQA: query head h reads key/value head h // (H_q // H_kv); causal masks are bottom-right
aligned unless `top_left` (query i sees key j when j <= i + N_k - N_q).
"""
import dataclasses

import numpy as np

LOG2E = np.float32(1.4426950408889634)
F32 = np.float32

# FP8 formats: (mantissa bits, smallest normal exponent, largest finite value), from the OCP FP8 spec.
FP8_FORMATS = {"e4m3": (3, -6, 448.0), "e5m2": (2, -14, 57344.0)}
FP8_P_SCALE = 256.0  # FlashAttention-3: P computed as exp2(x - m + 8), so P <= 2^8
# fp8-p-overflow: a P scale far past the format's maximum (128 x, rounded up to a power of two).
FP8_OVERFLOW_FACTOR = 128.0


def round_bf16(x):
    """bf16 as the float32 bit pattern truncated to 16 bits with round-to-nearest-even."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    bits = x.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    out = (rounded & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


def round_to(dtype, x):
    x = np.asarray(x, dtype=np.float32)
    if dtype == "bf16":
        return round_bf16(x)
    if dtype == "fp16":
        with np.errstate(over="ignore"):
            return x.astype(np.float16).astype(np.float32)
    return x


def round_fp8(fmt, x):
    """x rounded to the FP8 format (nearest, ties to even; subnormals; saturation to the largest finite
    value, as a kernel's satfinite conversion does). NaN stays NaN."""
    mbits, emin, top = FP8_FORMATS[fmt]
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.floor(np.log2(np.where(a > 0, a, 1.0)))
    quantum = np.exp2(np.maximum(e, emin) - mbits)
    r = np.minimum(np.round(a / quantum) * quantum, top)
    return np.where(np.isnan(x), x, np.sign(x) * r)


def fp8_scales(fmt, x, scaling, block_rows):
    """One scale per element row of x (B, H, N, D): top / amax of its tensor or of its block of rows."""
    top = FP8_FORMATS[fmt][2]
    a = np.abs(np.asarray(x, dtype=np.float64))
    if scaling == "per_tensor":
        amax = np.full(x.shape[:3], a.max())
    else:
        n = x.shape[2]
        amax = np.zeros(x.shape[:3])
        for r0 in range(0, n, block_rows):
            amax[:, :, r0:r0 + block_rows] = (
                a[:, :, r0:r0 + block_rows].max(axis=(2, 3), keepdims=True)[..., 0])
    return np.where(amax > 0, top / np.where(amax > 0, amax, 1.0), 1.0)


def quantize_fp8(fmt, x, scaling, block_rows):
    """(codes, descale per row): codes = FP8(x * scale); the kernel computes with codes * descale."""
    scale = fp8_scales(fmt, x, scaling, block_rows)
    codes = round_fp8(fmt, x * scale[..., None])
    return codes.astype(F32), (1.0 / scale).astype(F32)


@dataclasses.dataclass
class Impl:
    dtype: str = "bf16"
    block_m: int = 64
    block_n: int = 64
    reverse_keys: bool = False
    exp2: bool = True           # exp2(s * scale * log2e - m * scale * log2e) instead of exp(s * scale - m)
    round_p: bool = True        # P (and dS) rounded to dtype before the products
    splits: int = 1             # split-KV: key blocks dealt round-robin to this many partial states
    causal: bool = False
    top_left: bool = False      # causal mask aligned top-left (PyTorch's is_causal) instead of bottom-right
    scale: float = 0.0          # 0: 1/sqrt(D)
    bug: str = ""               # catalogue id of the bug written in, "" for none
    gqa_interleaved: bool = False
    dropout: float = 0.0
    seed: int = 0
    fp8: str = ""               # "e4m3" or "e5m2": FP8 operands and P (dtype is then the output's, bf16)
    fp8_scaling: str = "per_tensor"  # or "per_block"
    fp8_block_rows: int = 64


def softmax_scale(impl, d):
    return F32(impl.scale if impl.scale > 0 else 1.0 / np.sqrt(d))


def kv_head_of(impl, h, hq, hkv):
    group = hq // hkv
    return h % hkv if impl.gqa_interleaved else h // group


def causal_limit(impl, nq, nk):
    """Last visible key of query row i is i + offset."""
    return 0 if impl.top_left else nk - nq


def forward_head(impl, q, k, v, rng):
    """One (batch, head): q (Nq, D), k and v (Nk, D), already rounded. \
Returns O (Nq, D) fp32, LSE, row max."""
    nq, d = q.shape
    nk = k.shape[0]
    scale = softmax_scale(impl, d)
    score_scale = F32(1.0) if impl.bug == "missing-scale" else scale
    scale_log2 = F32(score_scale * LOG2E)
    bm, bn = impl.block_m, impl.block_n
    offset = causal_limit(impl, nq, nk)
    slack = 1 if impl.bug == "causal-diagonal" else 0
    top = FP8_FORMATS[impl.fp8][2] if impl.fp8 else 0.0
    p_scale = (2.0 ** np.ceil(np.log2(FP8_OVERFLOW_FACTOR * top)) if impl.bug == "fp8-p-overflow"
               else FP8_P_SCALE)
    n_blocks = (nk + bn - 1) // bn
    # Zero-padded K and V (as a kernel's shared-memory tiles past N_k).
    kp = np.zeros((n_blocks * bn, d), F32)
    vp = np.zeros((n_blocks * bn, d), F32)
    kp[:nk], vp[:nk] = k, v
    o = np.zeros((nq, d), F32)
    lse = np.zeros(nq, F32)
    row_max = np.zeros(nq, F32)
    for r0 in range(0, nq, bm):
        r1 = min(nq, r0 + bm)
        rows = np.arange(r0, r1)
        # Causal block skipping: blocks past the tile's last visible key are never visited.
        visible_end = min(nk, r1 - 1 + offset + 1) if impl.causal else nk
        blocks = (visible_end + bn - 1) // bn if visible_end > 0 else 0
        if blocks == 0:
            o[r0:r1] = 0
            lse[r0:r1] = -np.inf
            row_max[r0:r1] = -np.inf
            continue
        order = list(range(blocks))
        if impl.reverse_keys:
            order.reverse()
        states = []
        for _ in range(impl.splits):
            m0 = np.zeros(r1 - r0, F32) if impl.bug == "m-init-zero" else np.full(r1 - r0, -np.inf, F32)
            states.append([m0, np.zeros(r1 - r0, F32), np.zeros((r1 - r0, d), F32)])
        # Split-KV: the visited key blocks in `splits` contiguous chunks, one partial state each.
        chunk = (len(order) + impl.splits - 1) // impl.splits
        for step, kb in enumerate(order):
            state = states[step // chunk]
            m_old, l, acc = state
            c0 = kb * bn
            cols = np.arange(c0, c0 + bn)
            s = (q[r0:r1] @ kp[c0:c0 + bn].T).astype(F32)
            if impl.bug != "tail-unmasked":
                s[:, cols >= nk] = -np.inf
            if impl.causal:
                s[cols[None, :] > rows[:, None] + offset + slack] = -np.inf
            with np.errstate(invalid="ignore", over="ignore"):
                if not impl.exp2:
                    s = (s * score_scale).astype(F32)
                m_new = np.maximum(m_old, s.max(axis=1))
                guard = ((lambda m: m) if impl.bug == "masked-row-nan"
                         else (lambda m: np.where(m == -np.inf, F32(0), m)))
                m_use = guard(m_new)
                m_p = guard(m_old) if impl.bug == "stale-max" else m_use
                if impl.exp2:
                    expo = s * scale_log2 - (m_p * scale_log2)[:, None]
                    p = np.exp(expo) if impl.bug == "exp-base-mismatch" else np.exp2(expo)
                    alpha_arg = m_old * scale_log2 - m_use * scale_log2
                    alpha = np.exp(alpha_arg) if impl.bug == "exp-base-mismatch" else np.exp2(alpha_arg)
                else:
                    p = np.exp(s - m_p[:, None])
                    alpha = np.exp(m_old - m_use)
                p = p.astype(F32)
                alpha = alpha.astype(F32)
                l = l + p.sum(axis=1) if impl.bug == "unrescaled-l" else alpha * l + p.sum(axis=1)
                if impl.dropout > 0:
                    keep = rng.random(p.shape) >= impl.dropout
                    p = np.where(keep, p / F32(1 - impl.dropout), F32(0)).astype(F32)
                if impl.fp8:  # FP8 of P * 2^8 before P V (saturating; l keeps the unquantised weights)
                    pv = (round_fp8(impl.fp8, p.astype(np.float64) * p_scale) / p_scale).astype(F32)
                else:
                    pv = round_to(impl.dtype, p) if impl.round_p else p
                acc = (acc + pv @ vp[c0:c0 + bn] if impl.bug == "unrescaled-o"
                       else alpha[:, None] * acc + pv @ vp[c0:c0 + bn])
                if impl.bug == "normalize-in-loop":
                    acc = acc / np.where((l == 0) | np.isnan(l), F32(1), l)[:, None]
            state[:] = [m_new.astype(F32), l.astype(F32), acc.astype(F32)]
        # Each split's epilogue (O_s = acc / l, LSE_s = m + log l), then split-KV's combine:
        # LSE = log sum_s exp(LSE_s), O = sum_s exp(LSE_s - LSE) O_s (one split: the epilogue alone).
        with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
            o_parts, lse_parts = [], []
            for m_s, l_s, a_s in states:
                inv = F32(1) / np.where((l_s == 0) | np.isnan(l_s), F32(1), l_s)
                o_parts.append(a_s if impl.bug == "normalize-in-loop" else a_s * inv[:, None])
                m_nat = m_s * score_scale if impl.exp2 else m_s  # m in raw units for exp2, scaled for exp
                log_l = np.log(l_s)
                lse_parts.append(np.where(l_s == 0, -np.inf,
                                          log_l if impl.bug == "lse-without-max" else m_nat + log_l))
            if impl.splits == 1:
                o_tile, lse_tile = o_parts[0], lse_parts[0]
            else:
                lse_stack = np.stack(lse_parts).astype(F32)
                top = lse_stack.max(axis=0)
                top_use = np.where(top == -np.inf, F32(0), top)
                w = np.exp(lse_stack - top_use).astype(F32)
                total = w.sum(axis=0)
                lse_tile = np.where(total == 0, -np.inf, top_use + np.log(total))
                w = w / np.where(total == 0, F32(1), total)
                o_tile = sum(w[s_, :, None] * o_parts[s_] for s_ in range(impl.splits))
            o[r0:r1] = o_tile
            lse[r0:r1] = lse_tile
            m_fin = np.max(np.stack([st[0] for st in states]), axis=0)
            row_max[r0:r1] = m_fin * score_scale if impl.exp2 else m_fin
    return o, lse, row_max


def backward_head(impl, q, k, v, o, lse, row_max, do):
    """FlashAttention-2 Algorithm 2 for one (batch, query head): dQ (Nq, D), dK and dV (Nk, D) in fp32."""
    nq, d = q.shape
    nk = k.shape[0]
    scale = softmax_scale(impl, d)
    bm, bn = impl.block_m, impl.block_n
    offset = causal_limit(impl, nq, nk)
    delta = (do * o).sum(axis=1).astype(F32)
    dq = np.zeros((nq, d), F32)
    dk = np.zeros((nk, d), F32)
    dv = np.zeros((nk, d), F32)
    # A row with no visible key: LSE = +inf makes P = exp(s - inf) = 0.
    bias = np.where(lse == -np.inf, np.inf, lse).astype(F32)
    if impl.bug == "bwd-p-without-l":
        bias = np.where(row_max == -np.inf, F32(0), row_max).astype(F32)
    order = list(range((nk + bn - 1) // bn))
    if impl.reverse_keys:
        order.reverse()
    for kb in order:
        c0, c1 = kb * bn, min(nk, kb * bn + bn)
        cols = np.arange(c0, c1)
        for r0 in range(0, nq, bm):
            r1 = min(nq, r0 + bm)
            rows = np.arange(r0, r1)
            s = (q[r0:r1] @ k[c0:c1].T).astype(F32)
            if impl.causal:
                s[cols[None, :] > rows[:, None] + offset] = -np.inf
            with np.errstate(invalid="ignore", over="ignore"):
                if impl.exp2:
                    p = np.exp2(s * F32(scale * LOG2E) - bias[r0:r1, None] * LOG2E).astype(F32)
                else:
                    p = np.exp(s * scale - bias[r0:r1, None]).astype(F32)
            pr = round_to(impl.dtype, p) if impl.round_p else p
            dv[c0:c1] += pr.T @ do[r0:r1]
            dp = (do[r0:r1] @ v[c0:c1].T).astype(F32)
            ds = p * dp if impl.bug == "bwd-missing-delta" else p * (dp - delta[r0:r1, None])
            ds = (round_to(impl.dtype, ds) if impl.round_p else ds).astype(F32)
            contribution = (ds @ k[c0:c1]).astype(F32) * scale
            if impl.bug == "bwd-dq-overwrite":
                dq[r0:r1] = contribution
            else:
                dq[r0:r1] += contribution
            dk_scale = F32(1) if impl.bug == "bwd-dk-missing-scale" else scale
            dk[c0:c1] += (ds.T @ q[r0:r1]).astype(F32) * dk_scale
    return dq, dk, dv


def attention(impl, q, k, v, do=None):
    """q (B, Hq, Nq, D), k and v (B, Hkv, Nk, D), rounded to impl.dtype. Returns a dict of fp32 outputs,
    rounded to impl.dtype (LSE stays fp32)."""
    b, hq, nq, d = q.shape
    hkv = k.shape[1]
    rng = np.random.default_rng(impl.seed + 7)
    if impl.fp8:
        if do is not None:
            raise ValueError("FP8: forward only (FlashAttention-3 publishes no FP8 backward)")
        # The score product sees codes x descale of Q and of K; fp8-missing-descale drops K's descale.
        q_codes, q_descale = quantize_fp8(impl.fp8, q, impl.fp8_scaling, impl.fp8_block_rows)
        k_codes, k_descale = quantize_fp8(impl.fp8, k, impl.fp8_scaling, impl.fp8_block_rows)
        v_codes, v_descale = quantize_fp8(impl.fp8, v, impl.fp8_scaling, impl.fp8_block_rows)
        q = (q_codes * q_descale[..., None]).astype(F32)
        k = k_codes if impl.bug == "fp8-missing-descale" else (k_codes * k_descale[..., None]).astype(F32)
        v = (v_codes * v_descale[..., None]).astype(F32)
    out = {"o": np.zeros_like(q), "lse": np.zeros((b, hq, nq), F32)}
    if do is not None:
        out.update(dq=np.zeros_like(q), dk=np.zeros_like(k), dv=np.zeros_like(v))
    for bi in range(b):
        for h in range(hq):
            hk = kv_head_of(impl, h, hq, hkv)
            o, lse, row_max = forward_head(impl, q[bi, h], k[bi, hk], v[bi, hk], rng)
            # The backward reads O as stored (rounded), as FlashAttention's preprocessing kernel does.
            o_stored = round_to(impl.dtype, o)
            out["o"][bi, h] = o_stored
            out["lse"][bi, h] = lse
            if do is not None:
                dq, dk, dv = backward_head(impl, q[bi, h], k[bi, hk], v[bi, hk], o_stored, lse, row_max,
                                           do[bi, h])
                out["dq"][bi, h] = dq
                out["dk"][bi, hk] += dk  # GQA: the group's query heads add into one key/value head
                out["dv"][bi, hk] += dv
    for name in ("o", "dq", "dk", "dv"):
        if name in out:
            out[name] = round_to(impl.dtype, out[name])
    return out
