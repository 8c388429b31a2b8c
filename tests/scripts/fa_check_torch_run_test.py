#!/usr/bin/env python3
"""scripts/fa_check_torch.py's run path without torch: the input families (numpy, seeded), the case plan,
bad options refused before torch is imported, and a whole run (inputs, the callable, the saved files,
fa-check, one line per case, the exit code) on a numpy stand-in for the few torch calls it makes
(fake_torch/), with callables that are correct ((B, H, N, D) and --layout bnhd), top-left causal and
unscaled. Torch itself, autograd
(--backward) and the built-in SDPA callables run only on the GPU machine.

usage: fa_check_torch_run_test.py FA_CHECK WORK_DIR
"""
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "scripts", "fa_check_torch.py")
FAKE = os.path.join(HERE, "fake_torch")
problems = []


def expect(condition, what):
    if not condition:
        problems.append(what)


def script_module():
    spec = importlib.util.spec_from_file_location("fa_check_torch", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(args, fake_torch):
    env = dict(os.environ)
    if fake_torch:
        env["PYTHONPATH"] = FAKE + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True, env=env)


def test_inputs(m):
    shape = (1, 2, 1, 64, 96, 32, False)
    for family in m.FAMILIES:
        a = m.make_inputs(family, shape, 5)
        b = m.make_inputs(family, shape, 5)
        expect(all(np.array_equal(x, y) for x, y in zip(a, b)), f"{family}: not the same for the same seed")
        expect([x.shape for x in a] == [(1, 2, 64, 32), (1, 1, 96, 32), (1, 1, 96, 32), (1, 2, 64, 32)],
               f"{family}: shapes {[x.shape for x in a]}")
        expect(all(x.dtype == np.float32 for x in a), f"{family}: not float32")
    q, k, _, _ = m.make_inputs("all_negative", shape, 3)
    scores = np.einsum("bhid,bkjd->bhij", q, k) / math.sqrt(32)
    expect(scores.max() < -100, f"all_negative: largest scaled score {scores.max():.1f}, expected < -100")
    q, k, _, _ = m.make_inputs("max_in_last_block", shape, 3)
    late = (np.einsum("bhid,bkjd->bhij", q, k).argmax(axis=3) >= 96 - 32).mean()
    expect(late > 0.6, f"max_in_last_block: {late:.2f} of rows have their max in the last third (0.78 seen)")
    cases = m.plan_cases(m.SHAPES["default"], m.FAMILIES, m.DTYPES)
    expect(len({c[0] for c in cases}) == len(cases) == len(m.SHAPES["default"]) * len(m.FAMILIES) * 2,
           "plan_cases: names not unique")
    expect([c[4] for c in cases] == list(range(1, len(cases) + 1)), "plan_cases: seeds not 1, 2, ...")
    expect(m.causal_alignment("sdpa", None) == "top-left", "sdpa is top-left by default")
    expect(m.causal_alignment("mod:fn", None) == "bottom-right", "a callable is bottom-right by default")
    expect(m.causal_alignment("sdpa", "bottom-right") == "bottom-right", "the user's alignment wins")


def test_refusals(fa_check):
    for args, named in ((["sdpa", "--dtypes", "fp9"], "--dtypes fp9"),
                        (["sdpa", "--families", "nosuch"], "--families nosuch"),
                        (["nosuch"], "nosuch is not allowed"),
                        (["sdpa", "--fa-check", "/no/such/fa-check"], "no such file")):
        proc = run(args + ([] if "--fa-check" in args else ["--fa-check", fa_check]), fake_torch=False)
        expect(proc.returncode == 2 and named in proc.stderr and len(proc.stderr.strip().splitlines()) == 1,
               f"{args}: exit {proc.returncode}, stderr {proc.stderr!r}")
    if importlib.util.find_spec("torch") is None:
        proc = run(["sdpa", "--fa-check", fa_check], fake_torch=False)
        expect(proc.returncode == 2 and "torch is not installed" in proc.stderr,
               f"no torch: exit {proc.returncode}, stderr {proc.stderr!r}")


def summary(proc):
    return {line.split(":", 1)[0]: line for line in proc.stdout.splitlines() if ": " in line}


def test_runs(fa_check, work):
    common = ["--fa-check", fa_check, "--shapes", "quick"]
    out = os.path.join(work, "correct")
    proc = run(["numpy_attention:correct", "--out", out, "--families", ",".join(script_module().FAMILIES)]
               + common, fake_torch=True)
    lines = summary(proc)
    expect(proc.returncode == 0, f"correct: exit {proc.returncode}: {proc.stdout}{proc.stderr}")
    expect(len(lines) == 2 * 4 * 2 and all(": PASS " in l for l in lines.values()),
           f"correct: expected 16 PASS lines, got {proc.stdout}")
    case = "normal-fp16-b1h4kv2-q96k160d64-causal"
    with open(os.path.join(out, case, "case.json")) as f:
        record = json.load(f)
    expect(record["causal_align"] == "bottom-right" and record["shape"]["heads_kv"] == 2 and record["causal"],
           f"{case}: case.json {record}")
    expect(np.load(os.path.join(out, case, "o.npy")).dtype == np.float16, f"{case}: o.npy not float16")
    expect(np.load(os.path.join(out, case.replace("fp16", "bf16"), "o.npy")).dtype == np.float32,
           "bf16 case: o.npy not float32")

    # PyTorch's top-left is_causal: fails under the bottom-right default with the mistake named, passes
    # when the convention is given.
    one = ["--families", "normal", "--dtypes", "bf16"] + common
    proc = run(["numpy_attention:top_left", "--out", os.path.join(work, "tl")] + one, fake_torch=True)
    causal = [l for n, l in summary(proc).items() if n.endswith("-causal")]
    expect(proc.returncode == 1 and causal and "FAIL" in causal[0]
           and "diagnosis: causal-top-left" in causal[0],
           f"top-left under bottom-right: exit {proc.returncode}: {proc.stdout}")
    proc = run(["numpy_attention:top_left", "--out", os.path.join(work, "tl2"), "--causal-align", "top-left"]
               + one, fake_torch=True)
    expect(proc.returncode == 0, f"top-left checked as top-left: exit {proc.returncode}: {proc.stdout}")
    proc = run(["numpy_attention:unscaled", "--out", os.path.join(work, "unscaled")] + one, fake_torch=True)
    lines = list(summary(proc).values())
    expect(proc.returncode == 1 and lines and all("diagnosis: missing-scale" in l for l in lines),
           f"unscaled: exit {proc.returncode}: {proc.stdout}")
    proc = run(["numpy_attention:correct_bnhd", "--out", os.path.join(work, "bnhd"), "--layout", "bnhd"]
               + one, fake_torch=True)
    expect(proc.returncode == 0 and len(summary(proc)) == 2,
           f"--layout bnhd: exit {proc.returncode}: {proc.stdout}")
    proc = run(["numpy_attention:correct", "--out", os.path.join(work, "bwd"), "--backward"] + one,
               fake_torch=True)
    expect(proc.returncode != 0 and "no autograd" in proc.stderr,
           "--backward on the stand-in must say it cannot")


def main():
    fa_check, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    test_inputs(script_module())
    test_refusals(fa_check)
    test_runs(fa_check, work)
    for p in problems:
        print("FAIL:", p)
    print("fa_check_torch run test:", "ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
