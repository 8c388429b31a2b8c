#!/usr/bin/env python3
"""io_traffic: one run directory's ncu logs (ncu_<family>_n<n>.log), allocations (alloc_*.csv), timings
(time_*.csv) and ceilings (ceilings.csv) against model.py. Prints Markdown; with --dat writes traffic.dat
(GB read + written against n, measured and modelled) and roofline.dat / roofline_ceilings.dat for
plot.sh. Usage: summarize.py RUN_DIR [--dat]"""
import csv
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import model  # noqa: E402
from bench_csv import csv_rows, speed_rows  # noqa: E402  (experiments/bench_csv.py)
from headline import attention_flops, headline_shape  # noqa: E402  (experiments/headline.py)

HEAD_DIM = 128  # the headline shapes (experiments/headline.py) at d 128


def ncu_bytes(path):
    read = write = 0.0
    kernels = set()
    lines = [l for l in open(path, errors="replace") if l.startswith('"')]
    for r in csv.DictReader(lines):
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except (KeyError, ValueError):
            continue
        kernels.add(r.get("ID", ""))
        if r["Metric Name"] == "dram__bytes_read.sum":
            read += v
        elif r["Metric Name"] == "dram__bytes_write.sum":
            write += v
    return (read, write, len(kernels)) if kernels else None


def main():
    run_dir = sys.argv[1]
    measured = {}
    for path in glob.glob(os.path.join(run_dir, "ncu_*_n*.log")):
        m = re.match(r"ncu_(.+)_n(\d+)\.log$", os.path.basename(path))
        got = ncu_bytes(path)
        if m and got:
            measured[(m.group(1), int(m.group(2)))] = got
    # An older run's table (traffic.csv of 2026-11-29) stands in when there are no ncu logs.
    for path in glob.glob(os.path.join(run_dir, "traffic.csv")):
        for r in csv_rows(path):
            measured.setdefault((r["family"], int(r["seqlen"])),
                                (float(r["dram_read_bytes"]), float(r["dram_write_bytes"]),
                                 int(r["kernels"])))
    timing = {}
    for path in glob.glob(os.path.join(run_dir, "time_*.csv")):
        for r in speed_rows(path):
            timing[(r["family"], int(r["seqlen"]))] = (float(r["median_ms"]), float(r["tflops"]))
    ceilings = {}
    for path in glob.glob(os.path.join(run_dir, "ceilings.csv")):
        for r in csv_rows(path):
            ceilings[r["ceiling"]] = float(r["value"])
    if not measured:
        sys.exit(f"summarize.py: no ncu logs or traffic.csv in {run_dir}")
    families = sorted({f for f, _ in measured})
    ns = sorted({n for _, n in measured})
    print("| family | n | kernels | DRAM read GB | model read GB | DRAM write GB | model write GB | ms | "
          "TFLOP/s | FLOP per DRAM byte |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    roofline = []
    for fam in families:
        for n in ns:
            if (fam, n) not in measured:
                continue
            read, write, kernels = measured[(fam, n)]
            b, h = headline_shape(n, HEAD_DIM)
            mr, mw = model.traffic(fam, b, h, n, HEAD_DIM)
            flops = attention_flops(b, h, n, n, HEAD_DIM)
            intensity = flops / (read + write) if read + write else float("nan")
            ms, tflops = timing.get((fam, n), (float("nan"), float("nan")))
            roofline.append((fam, n, intensity, tflops))
            print(f"| {fam} | {n} | {kernels} | {read / 1e9:.3f} | {mr / 1e9:.3f} | {write / 1e9:.3f} | "
                  f"{mw / 1e9:.3f} | {ms:.3f} | {tflops:.1f} | {intensity:.0f} |")
    if ceilings:
        bw, peak = ceilings.get("dram_copy"), ceilings.get("bf16_gemm")
        print(f"\nCeilings measured in the same run: copy {bw / 1e12:.2f} TB/s, "
              f"bf16 GEMM {peak / 1e12:.0f} TFLOP/s; ridge point {peak / bw:.0f} FLOP per byte.")
    if "--dat" in sys.argv:
        with open(os.path.join(run_dir, "traffic.dat"), "w") as f:
            cols = [f"{fam}_measured" for fam in families] + [f"{fam}_model" for fam in families]
            f.write("n " + " ".join(cols) + "\n")
            for n in ns:
                vals = []
                for fam in families:
                    got = measured.get((fam, n))
                    vals.append(f"{(got[0] + got[1]) / 1e9:.5f}" if got else "NaN")
                for fam in families:
                    mr, mw = model.traffic(fam, *headline_shape(n, HEAD_DIM), n, HEAD_DIM)
                    vals.append(f"{(mr + mw) / 1e9:.5f}")
                f.write(f"{n} " + " ".join(vals) + "\n")
        with open(os.path.join(run_dir, "roofline.dat"), "w") as f:
            for fam in families:
                f.write(f"# {fam}\n")
                for fam2, n, intensity, tflops in roofline:
                    if fam2 == fam:
                        f.write(f"{intensity:.4f} {tflops:.3f} {n}\n")
                f.write("\n\n")
        if ceilings:
            with open(os.path.join(run_dir, "roofline_ceilings.txt"), "w") as f:
                f.write(f"{ceilings['dram_copy']:.6g} {ceilings['bf16_gemm']:.6g}\n")


if __name__ == "__main__":
    main()
