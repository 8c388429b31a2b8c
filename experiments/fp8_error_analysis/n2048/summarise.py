#!/usr/bin/env python3
"""Pools study.cpp's CSV over its seeds: per (n, case) the RMSE sqrt(mean of squares) (every seed has the same
number of rows), and the mean of the row-class counts and MSE shares. Usage: summarise.py results.csv ..."""
import collections
import math
import sys

values = collections.defaultdict(dict)
for path in sys.argv[1:]:
    with open(path) as f:
        next(f)
        for line in f:
            n, seed, case, value = line.rstrip("\n").split(",")
            values[(int(n), case)][int(seed)] = float(value)
for (n, case), v in sorted(values.items(),
                           key=lambda kv: (kv[0][0], kv[0][1].startswith(("pmax", "top")), kv[0][1])):
    seeds = " ".join(f"{v[s]:.3g}" for s in sorted(v))
    if case.endswith(("rows", "mse_share")):
        print(f"{n} {case}: {seeds} -> mean {sum(v.values()) / len(v):.3g}")
    else:
        print(f"{n} {case}: {seeds} -> pooled {math.sqrt(sum(x * x for x in v.values()) / len(v)):.3e}")
