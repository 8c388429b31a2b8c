#!/usr/bin/env python3
"""experiments/headline.py holds device/problem.hpp's headline constants (Python cannot read the C++ ones):
this fails when either side changes alone, and checks the batch past n = 16384 stays 1, as in C++."""
import os
import re
import sys
import unittest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(REPO, "experiments"))
import headline  # noqa: E402


def cpp_constant(name):
    with open(os.path.join(REPO, "device", "problem.hpp"), encoding="utf-8") as f:
        found = re.search(rf"\b{name}\s*=\s*(\d+)\s*;", f.read())
    if not found:
        raise AssertionError(f"device/problem.hpp no longer defines {name}")
    return int(found.group(1))


class HeadlineTest(unittest.TestCase):
    def test_the_constants_are_device_problems(self):
        self.assertEqual(headline.TOKENS, cpp_constant("kHeadlineTokens"))
        self.assertEqual(headline.WIDTH, cpp_constant("kHeadlineWidth"))

    def test_the_shape_at_and_past_the_tokens(self):
        self.assertEqual(headline.headline_shape(4096, 128), (4, 16))
        self.assertEqual(headline.headline_shape(32768, 64), (1, 32))
        self.assertTrue(headline.is_headline(1, 8, 16384, 256))
        self.assertFalse(headline.is_headline(2, 8, 16384, 256))


if __name__ == "__main__":
    unittest.main()
