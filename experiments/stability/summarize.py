#!/usr/bin/env python3
"""stability: one results directory's results.csv (fa-stability-report), gpu_<family>.csv (fa-bench
--stability-study: our kernels on the GPU, the same columns) and gpu.csv (stability_gpu.py: PyTorch).
Prints Markdown: RMSE of O per n for standard attention and the tiled algorithm per kBlockN, and the ratio
tiled / standard (Golden et al. report ~10x for Flash Attention in bf16). With --dat writes, per family and
precision, vs_n_<family>_<precision>_<output>.dat and vs_block_n_<family>_<precision>.dat (n = 4096), and
gpu_<dtype>.dat. Usage: summarize.py RESULTS_DIR [--dat]"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import csv_rows  # noqa: E402  (experiments/bench_csv.py)

BLOCK_N_AT = 4096


def write_dat(path, header, lines):
    with open(path + ".tmp", "w") as f:
        f.write(" ".join(header) + "\n")
        for line in lines:
            f.write(" ".join(line) + "\n")
    os.replace(path + ".tmp", path)


def column_name(method, block_n):
    if method == "standard":
        return "standard"
    if method == "tiled":
        return f"tiled kBlockN {block_n}"
    return f"GPU {method}" + (f" kBlockN {block_n}" if block_n else "")


def column_order(key):
    method, block_n = key
    return ({"standard": 0, "tiled": 1}.get(method, 2), method, block_n)


def main():
    run_dir = sys.argv[1]
    dat = "--dat" in sys.argv
    data = []
    for path in ([os.path.join(run_dir, "results.csv")]
                 + sorted(glob.glob(os.path.join(run_dir, "gpu_*.csv")))):
        if os.path.exists(path):
            data += csv_rows(path)
    if data:
        groups = sorted({(r["family"], r["precision"], r["output"]) for r in data})
        for fam, prec, out in groups:
            sel = [r for r in data if (r["family"], r["precision"], r["output"]) == (fam, prec, out)]
            ns = sorted({int(r["seqlen"]) for r in sel})
            cols = sorted({(r["method"], int(r["block_n"])) for r in sel}, key=column_order)
            val = {(r["method"], int(r["block_n"]), int(r["seqlen"])): float(r["rmse"]) for r in sel}
            tiled = [c for c in cols if c[0] == "tiled"]
            gpu_tiled = [c for c in cols if c[0] not in ("standard", "tiled", "naive")]
            print(f"\n### {fam}, {prec}, O stored in {out}: RMSE of O against float64\n")
            header = [column_name(*c) for c in cols] + ["tiled / standard"]
            if ("naive", 0) in cols and gpu_tiled:
                header.append("GPU tiled / GPU naive")
            print("| n | " + " | ".join(header) + " |")
            print("|---|" + "---|" * len(header))
            lines = []
            for n in ns:
                cells = [val.get((m, b, n)) for m, b in cols]
                std = val.get(("standard", 0, n))
                ratios = [val[(m, b, n)] / std for m, b in tiled if (m, b, n) in val and std]
                span = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "—"
                row = [f"{c:.3e}" if c is not None else "—" for c in cells] + [span]
                if ("naive", 0) in cols and gpu_tiled:
                    base = val.get(("naive", 0, n))
                    g = [val[(m, b, n)] / base for m, b in gpu_tiled if (m, b, n) in val and base]
                    row.append(f"{min(g):.2f}-{max(g):.2f}" if g else "—")
                print(f"| {n} | " + " | ".join(row) + " |")
                lines.append([str(n)] + [f"{c:.6e}" if c is not None else "NaN" for c in cells])
            if dat:
                write_dat(os.path.join(run_dir, f"vs_n_{fam}_{prec}_{out}.dat"),
                          ["n"] + [column_name(*c).replace(" ", "_") for c in cols], lines)
        if dat:
            for fam, prec in sorted({(g[0], g[1]) for g in groups}):
                sel = [r for r in data if r["family"] == fam and r["precision"] == prec
                       and int(r["seqlen"]) == BLOCK_N_AT and r["method"] in ("tiled", "standard")]
                outs = sorted({r["output"] for r in sel})
                bns = sorted({int(r["block_n"]) for r in sel if r["method"] == "tiled"})
                if not bns:
                    continue
                val = {(r["method"], r["output"], int(r["block_n"])): float(r["rmse"]) for r in sel}
                header = ["kBlockN"] + [f"tiled_O_{o}" for o in outs] + [f"standard_O_{o}" for o in outs]
                lines = [[str(b)] + [f"{val[('tiled', o, b)]:.6e}" for o in outs]
                         + [f"{val[('standard', o, 0)]:.6e}" for o in outs]
                         for b in bns]
                write_dat(os.path.join(run_dir, f"vs_block_n_{fam}_{prec}.dat"), header, lines)
    path = os.path.join(run_dir, "gpu.csv")
    if os.path.exists(path):
        data = csv_rows(path)
        for dtype in sorted({r["dtype"] for r in data}):
            sel = [r for r in data if r["dtype"] == dtype]
            names = sorted({r["backend"] for r in sel})
            ns = sorted({int(r["seqlen"]) for r in sel})
            val = {(r["backend"], int(r["seqlen"])): float(r["max_abs"]) for r in sel}
            print(f"\n### GPU, {dtype}: max |O - float64| (PyTorch backends)\n")
            print("| n | " + " | ".join(names) + " | flash / math |")
            print("|---|" + "---|" * len(names) + "---|")
            for n in ns:
                f, m = val.get(("flash", n)), val.get(("math", n))
                ratio = f"{f / m:.2f}" if f and m else "—"
                print(f"| {n} | " + " | ".join(f"{val[(b, n)]:.3e}" if (b, n) in val else "—"
                                               for b in names)
                      + f" | {ratio} |")
            if dat:
                write_dat(os.path.join(run_dir, f"gpu_{dtype}.dat"), ["n"] + names,
                          [[str(n)] + [f"{val[(b, n)]:.6e}" if (b, n) in val else "NaN" for b in names]
                           for n in ns])


if __name__ == "__main__":
    main()
