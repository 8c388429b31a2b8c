#!/usr/bin/env python3
"""stability: one results directory's results.csv (fa-stability-report) and gpu.csv (stability_gpu.py).
Prints Markdown: RMSE of O per n for standard attention and the tiled algorithm per kBlockN, and the ratio
tiled / standard (Golden et al. report ~10x for Flash Attention in bf16). With --dat writes, per family and
precision, vs_n_<family>_<precision>_<output>.dat and vs_block_n_<family>_<precision>.dat (n = 4096), and
gpu_<dtype>.dat. Usage: summarize.py RESULTS_DIR [--dat]"""
import csv
import os
import sys

BLOCK_N_AT = 4096


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def write_dat(path, header, lines):
    with open(path + ".tmp", "w") as f:
        f.write(" ".join(header) + "\n")
        for line in lines:
            f.write(" ".join(line) + "\n")
    os.replace(path + ".tmp", path)


def main():
    run_dir = sys.argv[1]
    dat = "--dat" in sys.argv
    path = os.path.join(run_dir, "results.csv")
    if os.path.exists(path):
        data = rows(path)
        groups = sorted({(r["family"], r["precision"], r["output"]) for r in data})
        for fam, prec, out in groups:
            sel = [r for r in data if (r["family"], r["precision"], r["output"]) == (fam, prec, out)]
            ns = sorted({int(r["seqlen"]) for r in sel})
            bns = sorted({int(r["block_n"]) for r in sel if r["method"] == "tiled"})
            val = {(r["method"], int(r["block_n"]), int(r["seqlen"])): float(r["rmse"]) for r in sel}
            print(f"\n### {fam}, {prec}, O stored in {out}: RMSE of O against float64\n")
            print("| n | standard | " + " | ".join(f"tiled kBlockN {b}" for b in bns) + " | tiled / standard |")
            print("|---|---|" + "---|" * len(bns) + "---|")
            lines = []
            for n in ns:
                std = val.get(("standard", 0, n))
                tiled = [val.get(("tiled", b, n)) for b in bns]
                ratios = [t / std for t in tiled if t and std]
                span = f"{min(ratios):.2f}-{max(ratios):.2f}" if ratios else "—"
                print(f"| {n} | {std:.3e} | " + " | ".join(f"{t:.3e}" for t in tiled) + f" | {span} |")
                lines.append([str(n), f"{std:.6e}"] + [f"{t:.6e}" for t in tiled])
            if dat:
                write_dat(os.path.join(run_dir, f"vs_n_{fam}_{prec}_{out}.dat"),
                          ["n", "standard"] + [f"tiled_kBlockN_{b}" for b in bns], lines)
        if dat:
            for fam, prec in sorted({(g[0], g[1]) for g in groups}):
                sel = [r for r in data if r["family"] == fam and r["precision"] == prec and int(r["seqlen"]) == BLOCK_N_AT]
                outs = sorted({r["output"] for r in sel})
                bns = sorted({int(r["block_n"]) for r in sel if r["method"] == "tiled"})
                if not bns:
                    continue
                val = {(r["method"], r["output"], int(r["block_n"])): float(r["rmse"]) for r in sel}
                header = ["kBlockN"] + [f"tiled_O_{o}" for o in outs] + [f"standard_O_{o}" for o in outs]
                lines = [[str(b)] + [f"{val[('tiled', o, b)]:.6e}" for o in outs] + [f"{val[('standard', o, 0)]:.6e}" for o in outs]
                         for b in bns]
                write_dat(os.path.join(run_dir, f"vs_block_n_{fam}_{prec}.dat"), header, lines)
    path = os.path.join(run_dir, "gpu.csv")
    if os.path.exists(path):
        data = rows(path)
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
                print(f"| {n} | " + " | ".join(f"{val[(b, n)]:.3e}" if (b, n) in val else "—" for b in names)
                      + f" | {ratio} |")
            if dat:
                write_dat(os.path.join(run_dir, f"gpu_{dtype}.dat"), ["n"] + names,
                          [[str(n)] + [f"{val[(b, n)]:.6e}" if (b, n) in val else "NaN" for b in names] for n in ns])


if __name__ == "__main__":
    main()
