#!/usr/bin/env python3
"""scripts/fa_check_torch.py --recheck on the saved cases (data/fa_check_torch, no torch needed): one summary
line per case; a correct GQA forward + backward passes; PyTorch's top-left is_causal output fails under
fa-check's bottom-right default with causal-top-left named and its fix, and passes with --causal-align
top-left; the exit code says that one case failed.

usage: fa_check_torch_test.py FA_CHECK WORK_DIR
"""
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "fa_check_torch.py")


def main():
    fa_check, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    # fa-check.json lands beside each case
    shutil.copytree(os.path.join(HERE, "data", "fa_check_torch"), work)
    proc = subprocess.run([sys.executable, SCRIPT, "--recheck", work, "--fa-check", fa_check],
                          capture_output=True, text=True)
    print(proc.stdout + proc.stderr)
    lines = {line.split(":", 1)[0]: line for line in proc.stdout.splitlines()}
    problems = []
    if proc.returncode != 1:
        problems.append(f"exit {proc.returncode}, expected 1 (one case fails)")
    if len(lines) != 3:
        problems.append(f"{len(lines)} summary lines, expected 3")
    expect = {
        "gqa-bf16-backward": ("PASS", None),
        "sdpa-is-causal-checked-top-left": ("PASS", None),
        "sdpa-is-causal-checked-bottom-right": ("FAIL", "diagnosis: causal-top-left; fix: check it as such "
                                                        "with fa-check --causal-align top-left"),
    }
    for name, (verdict, text) in expect.items():
        line = lines.get(name, "")
        if f": {verdict} " not in line:
            problems.append(f"{name}: expected {verdict}, got '{line}'")
        if text and text not in line:
            problems.append(f"{name}: expected '{text}' in '{line}'")
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
