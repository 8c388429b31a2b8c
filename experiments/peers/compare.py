#!/usr/bin/env python3
"""Joins fa-bench CSVs with peers.py CSVs of the same run: our TFLOP/s, FA2's, cuDNN's, and the ratios.
Usage: compare.py RESULTS_DIR  (reads bench_*.csv and peers*.csv there; prints a Markdown table)"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows, speed_rows  # noqa: E402  (experiments/bench_csv.py)


d = sys.argv[1]
peers = {}
for p in glob.glob(f"{d}/peers*.csv"):
    for r in csv_rows(p):
        if not r["tflops"]:  # a --memory-only row: bytes, no time
            continue
        peers[(r["backend"], r["dtype"], int(r["head_dim"]), int(r["seqlen"]), r["mask"],
               r["direction"])] = float(r["tflops"])
print("| family | dtype | d | mask | n | ours TFLOP/s | FA2 (torch) | ours/FA2 | cuDNN | ours/cuDNN |")
print("|---|---|---|---|---|---|---|---|---|---|")
for b in sorted(glob.glob(f"{d}/bench_*.csv")):
    for r in speed_rows(b):
        key = (r["dtype"], int(r["head_dim"]), int(r["seqlen"]), r["mask"], r["direction"])
        ours = float(r["tflops"])
        fa2, cud = peers.get(("flash",) + key), peers.get(("cudnn",) + key)
        f = lambda x: f"{x:.0f}" if x else "—"
        ratio = lambda x: f"{ours / x:.2f}" if x else "—"
        print(f"| {r['family']} | {r['dtype']} | {r['head_dim']} | {r['mask']} | {r['seqlen']} | "
              f"{ours:.0f} | {f(fa2)} | {ratio(fa2)} | {f(cud)} | {ratio(cud)} |")
