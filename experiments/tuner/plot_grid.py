#!/usr/bin/env python3
"""Draws the shipped headline grid (db/seed/best_configs.tsv): TFLOP/s of every family's best config against
n, one plot per direction x head dim x mask, beside the peers of a recorded run (PyTorch's FlashAttention-2
and cuDNN, experiments/peers's CSV). Only headline shapes are drawn (b = 16384 / n, h = 2048 / d, the
papers' and the grid's), so that every point of a line does the same work per token.

Each plot is an SVG drawn by experiments/lines.gp from a data file beside it (the numbers plotted, one row
per n, NaN where a series has no point), both written to temporary names and renamed.

Usage: plot_grid.py [--seed TSV] [--peers CSV ...] [--gpu NAME] [--out DIR]
"""
import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)
from bench_csv import csv_rows  # noqa: E402  (experiments/bench_csv.py)
from headline import is_headline  # noqa: E402  (experiments/headline.py)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SEQLENS = [1024, 2048, 4096, 8192, 16384]
HEAD_DIMS = [64, 128, 256]
PEER_NAMES = {"cudnn": "cuDNN", "flash": "FA2"}
# The H200's peers of 2026-12-02 (bf16 and fp16, forward and backward, every head dim and mask, n 1024-16384).
DEFAULT_PEERS = [
    os.path.join(REPO, "experiments/fa3_sm90_bwd/results", run, "peers.csv")
    for run in ("2026-12-02-h200-s6-call1", "2026-12-02-h200-s6-call4-fp16")
]


def read_seed(path, gpu):
    """{(direction, d, mask): {series: {n: tflops}}} of the headline rows measured on `gpu`."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [l for l in f.read().splitlines() if l.strip() and not l.startswith("#")]
    except OSError as e:
        fail(f"cannot read the seed file {path}: {e.strerror}")
    if not lines:
        fail(f"{path}: no header line")
    header = lines[0].split("\t")
    need = ["gpu", "family", "dtype", "head_dim", "causal", "direction", "batch", "heads_q", "seqlen_q",
            "tflops"]
    missing = [c for c in need if c not in header]
    if missing:
        fail(f"{path}: no column {', '.join(missing)} (is it db/seed/best_configs.tsv's format?)")
    grid = {}
    for line in lines[1:]:
        row = dict(zip(header, line.split("\t")))
        try:
            d, n, b, h = (int(row[k]) for k in ("head_dim", "seqlen_q", "batch", "heads_q"))
            tflops = float(row["tflops"])
        except (KeyError, ValueError):
            fail(f"{path}: a row that is not numbers where numbers belong: {line[:80]}")
        if row["gpu"] != gpu or not is_headline(b, h, n, d):
            continue
        mask = "causal" if row["causal"] == "1" else "full"
        series = f"{row['family']}:{row['dtype']}"
        grid.setdefault((row["direction"], d, mask), {}).setdefault(series, {})[n] = tflops
    return grid


def add_peers(grid, paths):
    for path in paths:
        try:
            rows = csv_rows(path)
        except OSError as e:
            fail(f"cannot read the peers file {path}: {e.strerror}")
        for r in rows:
            try:
                key = (r["direction"], int(r["head_dim"]), r["mask"])
                n, tflops = int(r["seqlen"]), float(r["tflops"])
            except (KeyError, ValueError):
                fail(f"{path}: not experiments/peers's CSV (backend, dtype, head_dim, seqlen, mask, ...)")
            batch, heads = r.get("batch"), r.get("heads")
            if batch and heads and not is_headline(int(batch), int(heads), n, key[1]):
                continue  # not a headline shape
            if key in grid and n in SEQLENS:
                name = f"{PEER_NAMES.get(r['backend'], r['backend'])}:{r['dtype']}"
                grid[key].setdefault(name, {})[n] = tflops


def write_atomically(path, text):
    partial = path + ".partial"
    with open(partial, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(partial, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", default=os.path.join(REPO, "db/seed/best_configs.tsv"),
                        help="best configs in db/seed/best_configs.tsv's format (default: that file)")
    parser.add_argument("--peers", nargs="*", default=DEFAULT_PEERS,
                        help="experiments/peers CSV files drawn beside ours "
                        "(default: the H200's of 2026-12-02)")
    parser.add_argument("--gpu", default="NVIDIA H200", help="the GPU whose rows are drawn")
    parser.add_argument("--out", default=os.path.join(REPO, "experiments/tuner/plots/grid"),
                        help="folder of the SVGs and their data files")
    args = parser.parse_args()
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        fail("no gnuplot on PATH (scripts/setup.sh installs gnuplot-nox)")
    grid = read_seed(args.seed, args.gpu)
    if not grid:
        fail(f"{args.seed}: no headline rows measured on {args.gpu}")
    add_peers(grid, args.peers)
    os.makedirs(args.out, exist_ok=True)
    drawn = 0
    for (direction, d, mask), series in sorted(grid.items()):
        peers = sorted(s for s in series if s.split(":")[0] in PEER_NAMES.values())
        names = sorted(s for s in series if s not in peers) + peers  # the peers last
        stem = f"{direction}_d{d}_{mask}"
        rows = ["n " + " ".join(names)]
        for n in SEQLENS:
            rows.append(f"{n} " + " ".join(f"{series[s][n]:.1f}" if n in series[s] else "NaN" for s in names))
        data = os.path.join(args.out, stem + ".dat")
        write_atomically(data, "\n".join(rows) + "\n")
        svg = os.path.join(args.out, stem + ".svg")
        title = f"{args.gpu}: best config per family, {direction} d{d} {mask} (b = 16384/n, h = 2048/d)"
        settings = (f"data='{data}'; out='{svg}.partial'; title='{title}'; "
                    "xlabel='n (sequence length)'; ylabel='TFLOP/s'")
        command = [gnuplot, "-e", settings, os.path.join(REPO, "experiments/lines.gp")]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            fail(f"gnuplot failed on {data}: {result.stderr.strip().splitlines()[-1:]}")
        os.replace(svg + ".partial", svg)
        drawn += 1
    print(f"plot_grid.py: {drawn} plots in {args.out} from {args.seed}")


if __name__ == "__main__":
    main()
