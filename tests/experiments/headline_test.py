#!/usr/bin/env python3
"""experiments/headline.py holds device/problem.hpp's headline constants and problem.cpp's FLOP constants
(Python cannot read the C++ ones): this fails when either side changes alone, and checks the batch past
n = 16384 stays 1 and the FLOP count, as in C++."""
import os
import re
import sys
import unittest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "experiments"))
import headline  # noqa: E402


def cpp_constant(name, file="problem.hpp"):
    with open(os.path.join(REPO, "device", file), encoding="utf-8") as f:
        found = re.search(rf"\b{name}\s*=\s*([\d.]+)\s*;", f.read())
    if not found:
        raise AssertionError(f"device/{file} no longer defines {name}")
    return float(found.group(1))


class HeadlineTest(unittest.TestCase):
    def test_the_constants_are_device_problems(self):
        self.assertEqual(headline.TOKENS, cpp_constant("kHeadlineTokens"))
        self.assertEqual(headline.WIDTH, cpp_constant("kHeadlineWidth"))

    def test_the_shape_at_and_past_the_tokens(self):
        self.assertEqual(headline.headline_shape(4096, 128), (4, 16))
        self.assertEqual(headline.headline_shape(32768, 64), (1, 32))
        self.assertTrue(headline.is_headline(1, 8, 16384, 256))
        self.assertFalse(headline.is_headline(2, 8, 16384, 256))

    def test_the_flop_constants_are_problem_cpps(self):
        self.assertEqual(headline.FORWARD_FLOPS_PER_MAC, cpp_constant("kForwardFlopsPerMac", "problem.cpp"))
        self.assertEqual(headline.BACKWARD_OVER_FORWARD, cpp_constant("kBackwardOverForward", "problem.cpp"))

    def test_the_flop_count(self):
        # b 4, h 16, n 4096, d 128: 4 * 4 * 16 * 4096^2 * 128 = 549755813888 (0.55 TFLOP) forward.
        self.assertEqual(headline.attention_flops(4, 16, 4096, 4096, 128), 549755813888)
        self.assertEqual(headline.attention_flops(4, 16, 4096, 4096, 128, causal=True), 549755813888 / 2)
        self.assertEqual(headline.attention_flops(4, 16, 4096, 4096, 128, backward=True), 2.5 * 549755813888)
        self.assertEqual(headline.attention_flops(1, 16, 16, 4096, 128), 4 * 16 * 16 * 4096 * 128)


if __name__ == "__main__":
    unittest.main()
