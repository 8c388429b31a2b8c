"""The headline shapes and the FLOP convention as the experiments' scripts use them: b * n = 16384 tokens and
h * d = 2048 of width at every n and d (device/problem.hpp's kHeadlineTokens and kHeadlineWidth, which
fa-bench and fa-tune use; the same numbers here because Python cannot read a C++ constant). Past n = 16384
the batch stays 1, as there. FLOPs as device/problem.cpp's attention_flops counts them."""
TOKENS = 16384
WIDTH = 2048
FORWARD_FLOPS_PER_MAC = 4.0  # problem.cpp's kForwardFlopsPerMac
BACKWARD_OVER_FORWARD = 2.5  # problem.cpp's kBackwardOverForward


def headline_shape(n, d):
    """(batch, query heads) of the headline shape at sequence length n and head dim d."""
    return max(1, TOKENS // n), max(1, WIDTH // d)


def is_headline(batch, heads, n, d):
    return (batch, heads) == headline_shape(n, d)


def attention_flops(batch, heads, n_q, n_k, d, causal=False, backward=False):
    """The FlashAttention papers' convention: forward 4 * b * h * n_q * n_k * d, halved for causal (at every
    shape, as the papers do), the backward 2.5 times the forward."""
    flops = FORWARD_FLOPS_PER_MAC * batch * heads * n_q * n_k * d / (2 if causal else 1)
    return flops * BACKWARD_OVER_FORWARD if backward else flops
