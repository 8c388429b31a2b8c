#!/usr/bin/env python3
"""The analytical DRAM traffic of one forward (bytes), the lesson's model beside what ncu counts.

  standard attention (naive): reads Q, K (S = Q K^T), S (softmax, once: the row is cached on chip), P and
      V (O = P V); writes S, P, O, LSE. S (B, H, N, N) in fp32 and P in bf16 (naive's defaults since
      2026-12-02: kScoreBits 32, P in the input type): 6 B * B H N^2 each way dominate.
  FA-1 order (fa1: one launch per key block of kBlockN keys): K, V read once; Q read at every step; O
      (fp32), m, l written at every step but the last (O in bf16 there) and read at every step but the
      first: the traffic grows with N / kBlockN.
  FlashAttention-2 (fa2_sm80, fa3_sm90): Q, K, V read once and O written once when K/V re-reads hit the L2
      (the ideal); without any L2 reuse K and V are read once per query block of kBlockM rows (the bound).

Elements are bf16 (2 B). Usage as a module: traffic(family, b, h, n, d) -> (read_bytes, write_bytes) and
flash_no_reuse_read(b, h, n, d, block_m). Block sizes are the families' d 128 defaults (fa1 kBlockN 128
since 2026-12-02: ncu saw 8 launches at n = 1024; 32 before; fa2_sm80 kBlockM 128)."""

ELEMENT = 2  # bf16
FP32 = 4
FA1_BLOCK_N = 128
FA2_BLOCK_M = 128


def traffic(family, b, h, n, d):
    bhnd = b * h * n * d
    bhn = b * h * n
    scores = b * h * n * n
    if family == "naive":
        read = 2 * bhnd * ELEMENT + scores * (FP32 + ELEMENT) + bhnd * ELEMENT
        write = scores * (FP32 + ELEMENT) + bhnd * ELEMENT + bhn * FP32
    elif family == "fa1":
        steps = -(-n // FA1_BLOCK_N)
        state = bhnd * FP32 + 2 * bhn * FP32  # O, m, l between steps
        read = 2 * bhnd * ELEMENT + steps * bhnd * ELEMENT + (steps - 1) * state
        write = (steps - 1) * state + bhnd * ELEMENT + bhn * FP32
    else:  # FlashAttention-2 order, ideal L2 reuse
        read = 3 * bhnd * ELEMENT
        write = bhnd * ELEMENT + bhn * FP32
    return read, write


def flash_no_reuse_read(b, h, n, d, block_m=FA2_BLOCK_M):
    bhnd = b * h * n * d
    return bhnd * ELEMENT + 2 * bhnd * ELEMENT * (-(-n // block_m))


if __name__ == "__main__":
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from headline import headline_shape  # experiments/headline.py

    for fam in ("naive", "fa1", "fa2_sm80"):
        for n in (1024, 4096, 16384):
            r, w = traffic(fam, *headline_shape(n, 128), n, 128)
            print(f"{fam:9s} n={n:6d} read {r / 1e9:8.3f} GB write {w / 1e9:8.3f} GB")
