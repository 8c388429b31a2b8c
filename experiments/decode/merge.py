#!/usr/bin/env python3
"""decode: one table per shape from one run directory: PyTorch's rows (peers_<shape>.csv, decode.py) and
ours (bench_<family>_<shape>_*.csv, fa-bench) as decode_<shape>.csv, and the split sweep (sweep_splits*.csv)
as sweep.csv, written into OUT_DIR (default RUN_DIR). Columns: backend, batch, heads, heads_kv, head_dim, \
nq, nk, median_ms, p20_ms, p80_ms,
kv_gbps (K and V bytes read per second: the figure of merit of a memory-bound decode), tflops, check.
Usage: merge.py RUN_DIR [OUT_DIR]"""
import csv
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows  # noqa: E402  (experiments/bench_csv.py)

FIELDS = ["backend", "batch", "heads", "heads_kv", "head_dim", "nq", "nk", "median_ms", "p20_ms", "p80_ms",
          "kv_gbps", "tflops", "check"]


def ours(path):
    """fa-bench rows in decode.py's form (seqlen is n_q, seqlen_k is n_k)."""
    out = []
    for r in csv_rows(path):
        b, hkv, nk, d = int(r["batch"]), int(r["heads_kv"]), int(r["seqlen_k"]), int(r["head_dim"])
        med = float(r["median_ms"])
        kv_bytes = 2 * b * hkv * nk * d * 2
        out.append(dict(backend=r["family"], batch=b, heads=r["heads"], heads_kv=hkv, head_dim=d,
                        nq=r["seqlen"], nk=nk, median_ms=med, p20_ms=r["p20_ms"], p80_ms=r["p80_ms"],
                        kv_gbps=kv_bytes / med / 1e6 if med > 0 else "", tflops=r["tflops"],
                        check=r["check"]))
    return out


def write(path, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in FIELDS})
    os.replace(tmp, path)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    run = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else run
    os.makedirs(out, exist_ok=True)
    written = 0
    for peers in sorted(glob.glob(os.path.join(run, "peers_*.csv"))):
        tag = re.match(r"peers_(.*)\.csv", os.path.basename(peers)).group(1)
        rows = csv_rows(peers)
        for bench in sorted(glob.glob(os.path.join(run, f"bench_*_{tag}_*.csv"))):
            rows += ours(bench)
        write(os.path.join(out, f"decode_{tag}.csv"), rows)
        written += 1
        print(f"decode_{tag}.csv: {len(rows)} rows")
    sweep = []
    for path in glob.glob(os.path.join(run, "sweep_splits*.csv")):
        splits = re.search(r"kSplits=(\d+)", csv_rows(path)[0]["config"]).group(1)  # one config a file
        for r in ours(path):
            r["splits"] = splits
            sweep.append(r)
    if sweep:
        sweep.sort(key=lambda r: int(r["splits"]))
        FIELDS.insert(0, "splits")
        write(os.path.join(out, "sweep.csv"), sweep)
        print(f"sweep.csv: {len(sweep)} rows")
    if not written and not sweep:
        sys.exit("merge.py: no peers_*.csv or sweep_splits*.csv in " + run)


if __name__ == "__main__":
    main()
