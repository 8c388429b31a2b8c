#!/usr/bin/env python3
"""The rows of one CSV (fa-bench's or peers.py's) that match every COLUMN=VALUE (VALUE may list several,
comma-separated: any of them), with its '#' lines, written to another (temporary name, then renamed): what
experiments/lib.sh's fl_reuse copies from another question's finished step. Exit 1 (nothing written) when no
row matches or a column is unknown.
Usage: reuse_rows.py SOURCE.csv DEST.csv [COLUMN=VALUE[,VALUE...] ...]"""
import csv
import os
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source, dest, wanted = sys.argv[1], sys.argv[2], [a.split("=", 1) for a in sys.argv[3:]]
    if any(len(w) != 2 for w in wanted):
        sys.exit(f"reuse_rows.py: filters are COLUMN=VALUE, got {sys.argv[3:]}")
    with open(source) as f:
        lines = f.read().splitlines(keepends=True)
    comments = [line for line in lines if line.startswith("#")]
    reader = csv.DictReader(line for line in lines if not line.startswith("#"))
    for column, _ in wanted:
        if column not in (reader.fieldnames or []):
            sys.exit(f"reuse_rows.py: {source} has no column {column!r}")
    kept = [r for r in reader if all(r[c] in v.split(",") for c, v in wanted)]
    if not kept:
        sys.exit(f"reuse_rows.py: no row of {source} has {' '.join(sys.argv[3:])}")
    with open(dest + ".tmp", "w", newline="") as f:
        f.writelines(comments)
        w = csv.DictWriter(f, fieldnames=reader.fieldnames)
        w.writeheader()
        w.writerows(kept)
    os.replace(dest + ".tmp", dest)
    print(f"{len(kept)} rows of {os.path.basename(source)}")


if __name__ == "__main__":
    main()
