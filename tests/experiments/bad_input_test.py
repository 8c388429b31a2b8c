#!/usr/bin/env python3
"""Bad input to the experiments' Python tools (peers.py, power_windows.py, run_modes.py, close_calls.py) is
one line on stderr and exit code 2 (the project's rule), and good input still runs. peers.py imports torch:
here it imports a stand-in that defines only the names peers.py reads at import time, so its arguments are
checked on a machine without torch (CI's)."""
import os
import subprocess
import sys
import tempfile
import unittest

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXPERIMENTS = os.path.join(REPO, "experiments")

# The names peers.py takes from torch when it is imported; any other name of torch is a measurement starting.
STAND_IN = {
    "torch/__init__.py": "bfloat16, float16 = 'bfloat16', 'float16'\n"
                         "def __getattr__(name):\n    raise AssertionError(f'no torch here: torch.{name}')\n",
    "torch/nn/__init__.py": "",
    "torch/nn/functional.py": "",
    "torch/nn/attention.py": "class SDPBackend:\n    FLASH_ATTENTION = CUDNN_ATTENTION = MATH = None\n"
                             "def sdpa_kernel(backend):\n    pass\n",
}


def run(script, args, env=None):
    return subprocess.run([sys.executable, os.path.join(EXPERIMENTS, script), *args], capture_output=True,
                          text=True, env=env, timeout=60)


class BadInputTest(unittest.TestCase):
    def assert_bad_input(self, result, script, words):
        self.assertEqual(result.returncode, 2, result.stderr)
        lines = result.stderr.splitlines()
        self.assertEqual(len(lines), 1, result.stderr)
        self.assertTrue(lines[0].startswith(f"{script}: ") and words in lines[0], lines[0])


class PeersTest(BadInputTest):
    @classmethod
    def setUpClass(cls):
        cls.stand_in = tempfile.TemporaryDirectory()
        for name, text in STAND_IN.items():
            path = os.path.join(cls.stand_in.name, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        cls.env = dict(os.environ, PYTHONPATH=cls.stand_in.name)

    @classmethod
    def tearDownClass(cls):
        cls.stand_in.cleanup()

    def peers(self, *args):
        return run("peers/peers.py", ["--out", os.path.join(self.stand_in.name, "out.csv"), *args], self.env)

    def test_each_bad_list_is_named(self):
        cases = [(["--backends", "flash,xformers"], "--backends 'xformers'"),
                 (["--dtype", "bf16,fp32"], "--dtype 'fp32'"),
                 (["--head-dim", "64,abc"], "--head-dim '64,abc'"),
                 (["--seqlen", "0"], "--seqlen '0'"),
                 (["--batch", "-1"], "--batch -1"),
                 (["--input-sets", "0"], "--input-sets 0"),
                 (["--settle-ms", "10001"], "--settle-ms 10001")]
        for args, words in cases:
            with self.subTest(args=args):
                self.assert_bad_input(self.peers(*args), "peers.py", words)

    def test_good_arguments_reach_the_measurement(self):
        # A measurement's first use of torch fails in the stand-in: reaching it means the arguments passed.
        result = self.peers("--dtype", "fp16", "--head-dim", "64", "--seqlen", "512", "--settle-ms", "200")
        self.assertIn("no torch here", result.stderr)


class PowerWindowsTest(BadInputTest):
    def test_a_folder_without_marks_or_samples(self):
        with tempfile.TemporaryDirectory() as folder:
            self.assert_bad_input(run("tuner/power_windows.py", [folder]), "power_windows.py", "no marks.txt")
            for name in ("marks.txt", "smi.csv"):
                open(os.path.join(folder, name), "w", encoding="utf-8").close()
            self.assert_bad_input(run("tuner/power_windows.py", [folder]), "power_windows.py",
                                  "no marked windows or no nvidia-smi samples")


class RunModesTest(BadInputTest):
    def test_a_folder_without_runs_and_a_runs_file_of_other_columns(self):
        with tempfile.TemporaryDirectory() as folder:
            self.assert_bad_input(run("tuner/run_modes.py", [folder]), "run_modes.py", "has no *-runs.csv")
            with open(os.path.join(folder, "1-c0-runs.csv"), "w", encoding="utf-8") as f:
                f.write("family,config,median_ms\nfa3_sm90,x,1.0\n")  # fa-bench's --csv, not --samples
            self.assert_bad_input(run("tuner/run_modes.py", [folder]), "run_modes.py",
                                  "not fa-bench --samples CSV")


class CloseCallsTest(BadInputTest):
    def test_a_file_that_is_not_a_database_and_a_margin_past_one(self):
        readme = os.path.join(EXPERIMENTS, "README.md")
        self.assert_bad_input(run("tuner/close_calls.py", [readme]), "close_calls.py",
                              "not an fa-tune database")
        self.assert_bad_input(run("tuner/close_calls.py", [readme, "--margin", "1.5"]), "close_calls.py",
                              "--margin 1.5")


if __name__ == "__main__":
    unittest.main()
