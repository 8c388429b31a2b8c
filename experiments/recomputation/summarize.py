#!/usr/bin/env python3
"""recomputation: one run directory's fa-bench CSVs (bench_*.csv) and peers.py CSV (peers.csv): backward
time, forward time and the backward's memory per implementation against n (non-causal rows). Prints
Markdown; with --dat writes recompute_bwd_ms.dat and recompute_memory.dat (GiB) for lines.gp.
Usage: summarize.py RUN_DIR [--dat]"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows, speed_rows  # noqa: E402  (experiments/bench_csv.py)

GIB = 2.0 ** 30
PEER_NAMES = {"flash": "torch FA2 (recomputes P)", "cudnn": "cuDNN (recomputes P)",
              "math": "torch math (stores P)"}


def main():
    run_dir = sys.argv[1]
    bwd_ms, fwd_ms, memory = {}, {}, {}
    for path in glob.glob(os.path.join(run_dir, "bench_*.csv")):
        for r in speed_rows(path):
            if r.get("mask") != "full":
                continue
            n = int(r["seqlen"])
            name = r["family"].replace("_bwd", "") + " (recomputes P)"
            if r["direction"] == "bwd":
                bwd_ms.setdefault(name, {})[n] = float(r["median_ms"])
                if r.get("device_bytes"):
                    memory.setdefault(name + ", allocated", {})[n] = float(r["device_bytes"])
            else:
                fwd_ms.setdefault(name, {})[n] = float(r["median_ms"])
    for path in glob.glob(os.path.join(run_dir, "peers*.csv")):
        for r in csv_rows(path):
            if r["mask"] != "full":
                continue
            n, name = int(r["seqlen"]), PEER_NAMES.get(r["backend"], r["backend"])
            (bwd_ms if r["direction"] == "bwd" else fwd_ms).setdefault(name, {})[n] = float(r["median_ms"])
            if r["direction"] == "bwd" and r.get("extra_fwdbwd_bytes"):
                memory.setdefault(name + ", extra", {})[n] = float(r["extra_fwdbwd_bytes"])
    if not bwd_ms:
        sys.exit(f"summarize.py: no backward rows in {run_dir}")
    for title, table, unit, scale in (("backward time, ms", bwd_ms, "ms", 1.0),
                                      ("forward time, ms", fwd_ms, "ms", 1.0),
                                      ("forward + backward memory, GiB", memory, "GiB", 1 / GIB)):
        if not table:
            continue
        ns = sorted({n for s in table.values() for n in s})
        names = sorted(table)
        print(f"\n### {title}\n")
        print("| n | " + " | ".join(names) + " |")
        print("|---|" + "---|" * len(names))
        for n in ns:
            print(f"| {n} | " + " | ".join(f"{table[m][n] * scale:.3f}" if n in table[m] else "—"
                                           for m in names) + " |")
    print("\n### backward / forward time (the price of recomputing P)\n")
    for name in sorted(bwd_ms):
        if name in fwd_ms:
            ratios = ", ".join(f"n {n}: {bwd_ms[name][n] / fwd_ms[name][n]:.2f}"
                               for n in sorted(bwd_ms[name]) if n in fwd_ms[name])
            print(f"- {name}: {ratios}")
    if "--dat" in sys.argv:
        for fname, table, scale in (("recompute_bwd_ms", bwd_ms, 1.0), ("recompute_memory", memory, 1 / GIB)):
            if not table:
                continue
            ns = sorted({n for s in table.values() for n in s})
            names = sorted(table)
            with open(os.path.join(run_dir, fname + ".dat"), "w") as f:
                f.write("n " + " ".join(m.replace(" ", "_").replace(",", "") for m in names) + "\n")
                for n in ns:
                    f.write(f"{n} " + " ".join(f"{table[m][n] * scale:.5f}" if n in table[m] else "NaN"
                                               for m in names) + "\n")


if __name__ == "__main__":
    main()
