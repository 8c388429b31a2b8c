"""The headline shapes as the experiments' scripts draw and check them: b * n = 16384 tokens and h * d = 2048
of width at every n and d (device/problem.hpp's kHeadlineTokens and kHeadlineWidth, which fa-bench and
fa-tune use; the same numbers here because Python cannot read a C++ constant). Past n = 16384 the batch
stays 1, as there."""
TOKENS = 16384
WIDTH = 2048


def headline_shape(n, d):
    """(batch, query heads) of the headline shape at sequence length n and head dim d."""
    return max(1, TOKENS // n), max(1, WIDTH // d)


def is_headline(batch, heads, n, d):
    return (batch, heads) == headline_shape(n, d)
