#!/usr/bin/env python3
"""memory_vs_n: device memory against n from one run directory: fa-bench's device_bytes (alloc_*.csv: what
each of our problems allocates, inputs included) and peers.py's peak extra memory (peers.csv: beyond the
inputs). Prints Markdown with the slope of log(memory) against log(n) between the two largest n each
implementation reached (2: n^2, 1: linear) and, with --dat, writes memory_fwd.dat and memory_fwdbwd.dat
(GiB) for lines.gp. Usage: summarize.py RUN_DIR [--dat]"""
import glob
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows  # noqa: E402  (experiments/bench_csv.py)

GIB = 2.0 ** 30
PEER_NAMES = {"flash": "torch FA2", "cudnn": "cuDNN", "math": "torch math"}


def load(run_dir):
    series = {"fwd": {}, "fwdbwd": {}}
    for path in glob.glob(os.path.join(run_dir, "alloc_*.csv")):
        for r in csv_rows(path):
            if not r.get("device_bytes"):
                continue
            kind = "fwdbwd" if r["direction"] == "bwd" else "fwd"
            name = r["family"].replace("_bwd", "") + (" (allocated)")
            series[kind].setdefault(name, {})[int(r["seqlen"])] = float(r["device_bytes"])
    for path in glob.glob(os.path.join(run_dir, "peers*.csv")):
        for r in csv_rows(path):
            name = PEER_NAMES.get(r["backend"], r["backend"]) + " (extra)"
            for kind, col in (("fwd", "extra_fwd_bytes"), ("fwdbwd", "extra_fwdbwd_bytes")):
                if r.get(col):
                    series[kind].setdefault(name, {})[int(r["seqlen"])] = float(r[col])
    return series


def slope(points):
    ns = sorted(points)
    if len(ns) < 2:
        return "—"
    a, b = ns[-2], ns[-1]
    if points[a] <= 0 or points[b] <= 0:
        return "—"
    return f"{math.log(points[b] / points[a]) / math.log(b / a):.2f}"


def main():
    run_dir = sys.argv[1]
    series = load(run_dir)
    if not any(series.values()):
        sys.exit(f"summarize.py: no alloc_*.csv or peers*.csv rows in {run_dir}")
    for kind, title in (("fwd", "forward"), ("fwdbwd", "forward + backward")):
        s = series[kind]
        if not s:
            continue
        ns = sorted({n for p in s.values() for n in p})
        names = sorted(s)
        print(f"\n### {title}: device memory, GiB (— : did not run, e.g. out of memory)\n")
        print("| n | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for n in ns:
            print(f"| {n} | " + " | ".join(f"{s[m][n] / GIB:.3f}" if n in s[m] else "—" for m in names)
                  + " |")
        print("| slope d log(mem) / d log(n), two largest n | " + " | ".join(slope(s[m]) for m in names)
              + " |")
        if "--dat" in sys.argv:
            path = os.path.join(run_dir, f"memory_{kind}.dat")
            with open(path + ".tmp", "w") as f:
                f.write("n " + " ".join(m.replace(" ", "_") for m in names) + "\n")
                for n in ns:
                    f.write(f"{n} " + " ".join(f"{s[m][n] / GIB:.5f}" if n in s[m] else "NaN" for m in names)
                            + "\n")
            os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
