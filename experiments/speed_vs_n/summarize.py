#!/usr/bin/env python3
"""speed_vs_n: joins fa-bench CSVs (bench_*.csv) and peers.py CSVs (peers*.csv) of one run directory.
Prints Markdown (TFLOP/s per implementation against n, and the lesson's ratios) and, with --dat, writes
speed_<direction>_d<d>_<mask>.dat into RUN_DIR for lines.gp. More directories after RUN_DIR (the same
run's CSVs kept elsewhere) are read too. Usage: summarize.py RUN_DIR [MORE_DIRS...] [--dat]"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows, speed_rows  # noqa: E402  (experiments/bench_csv.py)

DTYPE = os.environ.get("DTYPE", "bf16")  # the run's element type (run.sh's DTYPE); other rows are skipped
PEER_NAMES = {"flash": "torch FA2", "cudnn": "cuDNN", "math": "torch math"}


def load(run_dirs):
    """{(direction, d, mask): {implementation: {n: tflops}}}"""
    table = {}
    bench = sorted(p for d in run_dirs for p in glob.glob(os.path.join(d, "bench_*.csv")))
    peers = sorted(p for d in run_dirs for p in glob.glob(os.path.join(d, "peers*.csv")))
    for path in bench:
        for r in speed_rows(path):
            if r["dtype"] != DTYPE:
                continue
            key = (r["direction"], int(r["head_dim"]), r["mask"])
            fam = r["family"].replace("_bwd", "")
            table.setdefault(key, {}).setdefault(fam, {})[int(r["seqlen"])] = float(r["tflops"])
    for path in peers:
        for r in csv_rows(path):
            if r["dtype"] != DTYPE:
                continue
            key = (r["direction"], int(r["head_dim"]), r["mask"])
            name = PEER_NAMES.get(r["backend"], r["backend"])
            table.setdefault(key, {}).setdefault(name, {})[int(r["seqlen"])] = float(r["tflops"])
    return table


def ratio(series, a, b, n):
    x, y = series.get(a, {}).get(n), series.get(b, {}).get(n)
    return f"{x / y:.2f}x" if x and y else "—"


def main():
    dirs = [a for a in sys.argv[1:] if not a.startswith("--")]
    run_dir = dirs[0]
    table = load(dirs)
    if not table:
        sys.exit(f"summarize.py: no bench_*.csv or peers*.csv rows in {dirs}")
    for key in sorted(table):
        series = table[key]
        ns = sorted({n for s in series.values() for n in s})
        names = sorted(series)
        direction, d, mask = key
        print(f"\n### {direction}, d = {d}, {mask}: TFLOP/s\n")
        print("| n | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for n in ns:
            print(f"| {n} | " + " | ".join(f"{series[m][n]:.1f}" if n in series[m] else "—" for m in names)
                  + " |")
        big = max(ns)
        at = 16384 if 16384 in ns else big
        print(f"\nAt n = {at}: fa2_sm80 / naive {ratio(series, 'fa2_sm80', 'naive', at)}, "
              f"fa2_sm80 / torch math {ratio(series, 'fa2_sm80', 'torch math', at)}, "
              f"torch FA2 / torch math {ratio(series, 'torch FA2', 'torch math', at)}, "
              f"fa2_sm80 / fa1 {ratio(series, 'fa2_sm80', 'fa1', at)}, "
              f"fa3_sm90 / fa2_sm80 {ratio(series, 'fa3_sm90', 'fa2_sm80', at)}, "
              f"cuDNN / torch FA2 {ratio(series, 'cuDNN', 'torch FA2', at)}")
        if "--dat" in sys.argv:
            path = os.path.join(run_dir, f"speed_{direction}_d{d}_{mask}.dat")
            with open(path + ".tmp", "w") as f:
                f.write("n " + " ".join(m.replace(" ", "_") for m in names) + "\n")
                for n in ns:
                    f.write(f"{n} " + " ".join(f"{series[m][n]:.3f}" if n in series[m] else "NaN"
                                               for m in names) + "\n")
            os.replace(path + ".tmp", path)


if __name__ == "__main__":
    main()
