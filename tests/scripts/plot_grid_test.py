#!/usr/bin/env python3
"""experiments/tuner/plot_grid.py on a small seed file and peers CSV: one plot per direction x head dim x
mask that has a headline row of the GPU asked for, the numbers of its data file, the peers beside ours, and
one line with exit code 2 for a bad seed file. Exits 77 (skipped) without gnuplot."""
import os
import shutil
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../experiments/tuner/plot_grid.py")
HEADER = ("gpu\tcc\tsm_count\tdriver\tfamily\tdtype\thead_dim\tcausal\tdirection\tbatch\theads_q\theads_kv\t"
          "seqlen_q\tseqlen_k\tconfig\tmedian_ms\ttflops\tnvrtc\trecorded_at\tcuda_driver_api")


def row(gpu, family, dtype, d, causal, direction, b, h, n, tflops):
    return (f"{gpu}\t9.0\t132\t580.159.04\t{family}\t{dtype}\t{d}\t{causal}\t{direction}\t{b}\t{h}\t{h}\t"
            f"{n}\t{n}\tkX=1\t1.0\t{tflops}\t13.0\t2026-12-04T00:00:00Z\t13000")


def check(condition, what):
    if not condition:
        print(f"FAIL: {what}")
        sys.exit(1)


def main():
    if not shutil.which("gnuplot"):
        print("no gnuplot: skipped")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        seed = os.path.join(tmp, "seed.tsv")
        rows = [
            row("NVIDIA H200", "fa3_sm90", "bf16", 128, 0, "fwd", 4, 16, 4096, 654.9),
            row("NVIDIA H200", "fa3_sm90", "bf16", 128, 0, "fwd", 2, 16, 8192, 681.0),
            row("NVIDIA H200", "fa3_sm90_bwd", "bf16", 64, 1, "bwd", 4, 32, 4096, 400.0),
            row("NVIDIA H200", "fa3_sm90", "bf16", 128, 0, "fwd", 1, 16, 4096, 500.0),  # not a headline shape
            # another GPU
            row("NVIDIA H100 80GB HBM3", "fa3_sm90", "fp16", 128, 0, "fwd", 4, 16, 4096, 600.0),
        ]
        with open(seed, "w") as f:
            f.write("# provenance\n" + HEADER + "\n" + "\n".join(rows) + "\n")
        peers = os.path.join(tmp, "peers.csv")
        with open(peers, "w") as f:
            f.write("# NVIDIA H200 torch 2.11\nbackend,dtype,head_dim,seqlen,mask,direction,median_ms,p20_ms,"
                    "p80_ms,tflops\ncudnn,bf16,128,4096,full,fwd,1,1,1,645.0\n"
                    "flash,bf16,256,4096,full,fwd,1,1,1,317.0\n")  # no row of ours there: not drawn
        out = os.path.join(tmp, "plots")
        done = subprocess.run([sys.executable, SCRIPT, "--seed", seed, "--peers", peers, "--out", out],
                              capture_output=True, text=True)
        check(done.returncode == 0, f"exit {done.returncode}: {done.stderr}")
        check(sorted(os.listdir(out)) == ["bwd_d64_causal.dat", "bwd_d64_causal.svg", "fwd_d128_full.dat",
                                          "fwd_d128_full.svg"], f"the plots made: {sorted(os.listdir(out))}")
        with open(os.path.join(out, "fwd_d128_full.dat")) as f:
            data = f.read().splitlines()
        check(data[0] == "n fa3_sm90:bf16 cuDNN:bf16", f"the series, ours first: {data[0]}")
        check(data[1] == "1024 NaN NaN", f"n 1024 has no point: {data[1]}")
        check(data[3] == "4096 654.9 645.0", f"n 4096, the headline row and the peer: {data[3]}")
        check(data[4] == "8192 681.0 NaN", f"n 8192: {data[4]}")
        with open(os.path.join(out, "fwd_d128_full.svg")) as f:
            check("<svg" in f.read(), "an SVG")
        check(not any(name.endswith(".partial") for name in os.listdir(out)), "no partial file left")
        bad = subprocess.run([sys.executable, SCRIPT, "--seed", os.path.join(tmp, "none.tsv"), "--out", out],
                             capture_output=True, text=True)
        check(bad.returncode == 2, f"a missing seed file exits 2, not {bad.returncode}")
        check(len(bad.stderr.strip().splitlines()) == 1 and "none.tsv" in bad.stderr,
              f"one line: {bad.stderr}")
    print("plot_grid.py: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
