#!/usr/bin/env python3
"""Which timed runs fell in which timing mode, and what sets the modes apart. Reads a folder's *-runs.csv
(fa-bench --samples: each timed run's problem, order, input set, ms and UTC end) and, where there, smi.csv
(nvidia-smi's timestamp, SM clock, memory clock, power, temperature every 100 ms, as alternate.sh samples
them). A problem's runs split into a fast and a slow mode at the widest gap between neighbouring sorted
times when that gap is over MODE_GAP of the faster side; one mode otherwise. Prints a Markdown table, a row
per file and problem: the runs, each mode's median and size, the slow mode's share of each input set (a
slow set points at placement), how often consecutive runs change mode against what independent runs would
give (fewer: the modes come in phases of time), the first change of mode (its run, and how long after the
first run it ended: where the modes are phases, the warm-up a timing needs to stay in one), and the SM clock
sampled nearest each mode's runs (a lower clock in the slow mode points at power). Usage: run_modes.py DIR"""
import csv
import datetime
import glob
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)
from power_windows import parse_time, read_samples  # noqa: E402

# Two modes are told apart above this gap: the two modes seen so far were ~7% apart (card_transfer's
# README, the H100 at n 16384), while one mode's p20-p80 spread is under 1%, and 300 runs of one mode leave
# neighbours in sorted order a few hundredths of a percent apart.
MODE_GAP = 0.02
# A run is matched with the nvidia-smi sample nearest its end when one is this close: the samples are 100 ms
# apart, so a run always has one within 50 ms unless nvidia-smi stalled.
NEAREST_SAMPLE = datetime.timedelta(milliseconds=150)


def read_runs(path):
    """{problem: [(run, input_set, ms, ended)] in run order}, a problem named by its config, dtype, mask,
    direction, n and d (a file of one fa-bench command holds each timed problem's runs in turn); fail()
    names a file without those columns."""
    problems = {}
    try:
        with open(path, encoding="utf-8", newline="") as f:
            for r in csv.DictReader(f):
                name = (f"{r['family']} {r['dtype']} {r['mask']} {r['direction']} n{r['seqlen']} "
                        f"d{r['head_dim']} {r['config']}")
                problems.setdefault(name, []).append(
                    (int(r["run"]), int(r["input_set"]), float(r["ms"]), parse_time(r["ended_utc"])))
    except (KeyError, ValueError) as e:
        fail(f"{path}: not fa-bench --samples CSV ({e!r})")
    return {name: sorted(runs) for name, runs in problems.items()}


def split_modes(times):
    """The slow mode's lower bound (ms), or None for one mode."""
    ordered = sorted(times)
    gaps = [(b - a) / a for a, b in zip(ordered, ordered[1:]) if a > 0]
    if not gaps or max(gaps) <= MODE_GAP:
        return None
    widest = gaps.index(max(gaps))
    return ordered[widest + 1]


def clock_near(samples, when):
    """The SM clock of the nvidia-smi sample nearest `when`, or None without one within NEAREST_SAMPLE."""
    best = min(samples, key=lambda s: abs(s[0] - when), default=None)
    return best[1] if best and abs(best[0] - when) <= NEAREST_SAMPLE else None


def describe(runs, samples):
    times = [r[2] for r in runs]
    bound = split_modes(times)
    slow = [r[2] >= bound for r in runs] if bound is not None else [False] * len(runs)
    fast_ms = [t for t, s in zip(times, slow) if not s]
    slow_ms = [t for t, s in zip(times, slow) if s]
    cells = [str(len(runs)), f"{statistics.median(fast_ms):.4f} ({len(fast_ms)})"]
    if not slow_ms:
        return cells + ["one mode", "", "", "", clocks(runs, slow, samples)]
    cells.append(f"{statistics.median(slow_ms):.4f} ({len(slow_ms)}), "
                 f"+{100 * (statistics.median(slow_ms) / statistics.median(fast_ms) - 1):.1f}%")
    by_set = {}
    for (_, input_set, _, _), s in zip(runs, slow):
        by_set.setdefault(input_set, []).append(s)
    cells.append(", ".join(f"set {k}: {sum(v)}/{len(v)}" for k, v in sorted(by_set.items())))
    share = len(slow_ms) / len(runs)
    switches = sum(a != b for a, b in zip(slow, slow[1:]))
    cells.append(f"{switches} (independent: {(len(runs) - 1) * 2 * share * (1 - share):.0f})")
    first = next(i for i, s in enumerate(slow) if s != slow[0])
    after_ms = (runs[first][3] - runs[0][3]).total_seconds() * 1000
    cells.append(f"run {runs[first][0]}, {after_ms:.0f} ms after run {runs[0][0]}")
    return cells + [clocks(runs, slow, samples)]


def clocks(runs, slow, samples):
    if not samples:
        return "no smi.csv"
    parts = []
    for name, want in (("fast", False), ("slow", True)):
        mhz = [c for r, s in zip(runs, slow) if s == want
               for c in [clock_near(samples, r[3])] if c is not None]
        if mhz:
            parts.append(f"{name} {statistics.median(mhz):.0f}")
    return ", ".join(parts) or "no sample near the runs"


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.stderr.write(__doc__ + "\n")
        sys.exit(2)
    folder = sys.argv[1]
    files = sorted(glob.glob(os.path.join(folder, "*-runs.csv")))
    if not files:
        fail(f"{folder} has no *-runs.csv (fa-bench --samples)")
    smi = os.path.join(folder, "smi.csv")
    samples = read_samples(smi) if os.path.isfile(smi) else []
    print("| runs file: problem | runs | fast mode ms (runs) | slow mode ms (runs) | slow runs by input set "
          "| mode changes | first change | SM MHz by mode |")
    print("|---|---|---|---|---|---|---|---|")
    for path in files:
        problems = read_runs(path)
        if not problems:
            print(f"| {os.path.basename(path)} | 0 | | | | | | |")
        for name, runs in problems.items():
            print(f"| {os.path.basename(path)}: {name} | " + " | ".join(describe(runs, samples)) + " |")


if __name__ == "__main__":
    main()
