#!/usr/bin/env python3
"""peers.py's settle (--settle-ms): it calls the peer, untimed, with the input sets in turn, until the time
has passed and not far past it, synchronizing after each batch. torch is a stand-in here (CI has none): the
calls sleep on the host as a kernel would keep the GPU busy, and synchronize is counted."""
import os
import sys
import time
import types
import unittest

# The modules peers.py imports, with the names it reads at import time; torch.cuda is the test's.
for name in ("torch", "torch.nn", "torch.nn.functional", "torch.nn.attention"):
    sys.modules[name] = types.ModuleType(name)
sys.modules["torch"].bfloat16, sys.modules["torch"].float16 = "bfloat16", "float16"
attention = sys.modules["torch.nn.attention"]
attention.SDPBackend = types.SimpleNamespace(FLASH_ATTENTION=0, CUDNN_ATTENTION=1, MATH=2)
attention.sdpa_kernel = None
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments",
                                "peers"))
import peers  # noqa: E402


class SettleTest(unittest.TestCase):
    def test_calls_for_the_time_with_the_sets_in_turn(self):
        calls, syncs = [], []
        peers.torch.cuda = types.SimpleNamespace(synchronize=lambda: syncs.append(len(calls)))

        def call(input_set):
            calls.append(input_set)
            time.sleep(0.001)

        began = time.monotonic()
        peers.settle(call, ["a", "b", "c"], 50)
        took = time.monotonic() - began
        self.assertGreaterEqual(took, 0.050)
        self.assertLess(took, 1.050)  # sized to end near the deadline; room for a loaded machine
        self.assertEqual(calls, [["a", "b", "c"][i % 3] for i in range(len(calls))])
        # Every batch ends with a synchronize, and a batch at most doubles the one before.
        self.assertEqual(syncs[-1], len(calls))
        batches = [b - a for a, b in zip([0] + syncs, syncs)]
        self.assertEqual(batches[0], 1)
        for before, after in zip(batches, batches[1:]):
            self.assertLessEqual(after, 2 * before)


if __name__ == "__main__":
    unittest.main()
