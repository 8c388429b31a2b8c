#!/usr/bin/env python3
"""One fa-explain --csv walk-through as the data files trace.gp draws.

Usage: trace_dat.py WALK.csv [--dim D] [--out BASE]   (D: the output component drawn, default 0)

Writes BASE.output.dat, BASE.m.dat and BASE.l.dat (BASE: WALK beside the CSV unless --out), in lines.gp's
format (a header "step name1 name2 ...", then one row per key block in the order visited, NaN where a
variant has no such block), and prints the gnuplot variables trace.gp needs, on one line:
  answer=<float64 answer of component D>; steps=N; xtics_cmd='set xtics (...)'; note="...";
  dim_label='...'; lts='<line type of each drawn variant>'; m_step=<tic step>; l_step=<tic step>
A mutant whose output so far, m and l equal the correct algorithm's at every block (for every
component) draws the correct line again: it is left out of the data and named in the note instead
("drawn by correct's line"), so that the plot shows only the lines that differ.
"""
import argparse
import csv
import math
import sys
from collections import OrderedDict

# Colours only: each variant keeps its line type (trace.gp's colour) in every plot, in the order of
# numerics/mutants/catalogue.hpp's forward mutants; a name not listed takes the next line type after them.
COLOURED = ["correct", "unrescaled-o", "unrescaled-l", "m-init-zero", "normalize-in-loop", "stale-max",
            "missing-scale", "exp-base-mismatch", "causal-diagonal", "masked-row-nan", "tail-unmasked",
            "lse-without-max"]


def tic_step(values, from_zero=False):
    """A step of 1, 2 or 5 times a power of ten that cuts the values' span into about four (0: one value)."""
    finite = [v for v in values if math.isfinite(v)] + ([0.0] if from_zero else [])
    span = max(finite, default=0.0) - min(finite, default=0.0)
    if span <= 0:
        return 0
    raw = span / 4
    power = 10 ** math.floor(math.log10(raw))
    return next(f * power for f in (1, 2, 5, 10) if raw <= f * power)


def main():
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("csv", help="a CSV of fa-explain --csv")
    parser.add_argument("--dim", type=int, default=0, help="the output component drawn (default 0)")
    parser.add_argument("--out", help="base of the data files (default: the CSV's path without .csv)")
    args = parser.parse_args()
    path, dim = args.csv, args.dim
    base = args.out or (path[:-4] if path.endswith(".csv") else path)

    variants = OrderedDict()  # name -> {step: row}, correct first as fa-explain writes it
    blocks = OrderedDict()  # step -> (block, first_key, last_key)
    components = set()
    answer = None
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            step = int(row["step"])
            components.add(int(row["dim"]))
            blocks[step] = (int(row["block"]), int(row["first_key"]), int(row["last_key"]))
            variants.setdefault(row["variant"], {}).setdefault(step, {})[int(row["dim"])] = row
            if int(row["dim"]) == dim:
                answer = float(row["answer"])
    if answer is None:
        sys.exit(f"{path}: no component {dim} (0..{max(components, default=-1)})")

    def state(name):  # every figure drawn, every component, as written (exact text compares exactly)
        return {s: [(r["m"], r["l"], r["output_so_far"]) for _, r in sorted(by_dim.items())]
                for s, by_dim in variants[name].items()}

    correct = state("correct")
    drawn = [name for name in variants if name == "correct" or state(name) != correct]
    identical = [name for name in variants if name not in drawn]

    steps = sorted(blocks)
    drawn_values = {"m": [], "l": []}
    for column, suffix in (("output_so_far", "output"), ("m", "m"), ("l", "l")):
        with open(f"{base}.{suffix}.dat", "w") as out:
            out.write(" ".join(["step"] + drawn) + "\n")
            for s in steps:
                cells = []
                for name in drawn:
                    row = variants[name].get(s, {}).get(dim)
                    value = float(row[column]) if row else math.nan
                    drawn_values.get(column, []).append(value)
                    # gnuplot takes NaN as missing (lines.gp's convention); an infinite m (a block that is
                    # all masked) has no place on a linear axis either.
                    cells.append("NaN" if not math.isfinite(value) else repr(value))
                out.write(" ".join([str(s)] + cells) + "\n")

    # Each tic: the key block's index over its keys (in double quotes: gnuplot makes the \n a line break).
    tics = ", ".join(f'"{b}\\n' + (f'keys {k0}-{k1}"' if k1 > k0 else f'key {k0}"') + f" {s}"
                     for s, (b, k0, k1) in blocks.items())
    note = "\\n".join(["drawn by correct's line", "(output so far, m and l", "the same on this row):"]
                      + identical) if identical else ""
    dim_label = f"component {dim} of {len(components)}" if len(components) > 1 else ""
    extra = iter(range(len(COLOURED) + 1, len(COLOURED) + len(drawn) + 1))
    lts = " ".join(str(COLOURED.index(n) + 1 if n in COLOURED else next(extra)) for n in drawn)
    print(f"answer={answer!r}; steps={len(steps)}; xtics_cmd='set xtics ({tics})'; note=\"{note}\"; "
          f"dim_label='{dim_label}'; lts='{lts}'; m_step={tic_step(drawn_values['m'])!r}; "
          f"l_step={tic_step(drawn_values['l'], from_zero=True)!r}")


if __name__ == "__main__":
    main()
