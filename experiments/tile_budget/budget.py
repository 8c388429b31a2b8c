#!/usr/bin/env python3
"""tile_budget: the lesson's worked example beside what ptxas reports and what the tuner picked.

The lesson: one query block of Br = 128 rows against key blocks of Bc = 128, d = 64, fp16, everything of
the block in shared memory: Q, K, V, O tiles (Br x d or Bc x d, 2 B) + S (Br x Bc, 2 B) + m and l (Br, 4 B
each) = 97 KiB; n = 4096 gives (4096 / 128)^2 = 1024 tiles of S. The kernel (fa2_sm80) keeps S, P, O, m, l
in registers and only Q and the K/V ring in shared memory: fa-tune --compile-only reports, per config, the
registers, spills and shared memory (static + dynamic) that ptxas and the family's own arithmetic give.

Usage: budget.py RESULTS_DIR  (reads compile_only_fa2_sm80_fp16_d64.txt, and \
compile_only_fa2_sm80_bf16_d128.txt
with the tuner fixture ../../tests/tuner/data/fa2_sm80_h200_bf16_d128_n4096_full.tsv when present);
prints Markdown and writes smem_vs_tflops.dat for plot.sh."""
import os
import re
import sys

KIB = 1024
ROW = re.compile(r"^(\S+)\s+(.+?)\s{2,}(kBlockM=\S+)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\S+)\s+(.*)$")


def lesson(br=128, bc=128, d=64, element=2, stat=4, n=4096):
    parts = {
        "Q tile (Br x d)": br * d * element,
        "K tile (Bc x d)": bc * d * element,
        "V tile (Bc x d)": bc * d * element,
        "O tile (Br x d)": br * d * element,
        "S tile (Br x Bc)": br * bc * element,
        "m and l (Br each, fp32)": 2 * br * stat,
    }
    return parts, (n // br) * (n // bc)


def compile_rows(path):
    out = []
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = ROW.match(line.rstrip("\n"))
        if not m or m.group(4) == "-":
            continue
        cfg = dict(kv.split("=") for kv in m.group(3).split(","))
        out.append(dict(config=m.group(3), cfg={k: int(v) for k, v in cfg.items()}, regs=int(m.group(4)),
                        smem=int(m.group(5)), spill=int(m.group(6)), verdict=m.group(9)))
    return out


def fixture(path):
    timed = {}
    if not os.path.exists(path):
        return timed
    for line in open(path):
        f = line.rstrip("\n").split("\t")
        if len(f) >= 8 and f[3] == "ok":
            timed[f[2]] = float(f[7])
    return timed


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    run_dir = sys.argv[1]
    parts, tiles = lesson()
    total = sum(parts.values())
    print("## The lesson's budget (Br = Bc = 128, d = 64, fp16, everything in shared memory)\n")
    print("| part | bytes | KiB |\n|---|---|---|")
    for name, b in parts.items():
        print(f"| {name} | {b} | {b / KIB:.1f} |")
    print(f"| **total** | {total} | **{total / KIB:.1f}** |\n")
    print(f"Tiles of S at n = 4096: (4096 / 128)^2 = **{tiles}**; "
          "the H100/H200 opt-in limit is 227 KiB per block.\n")

    d64 = compile_rows(os.path.join(run_dir, "compile_only_fa2_sm80_fp16_d64.txt"))
    match = [r for r in d64 if r["cfg"].get("kBlockM") == 128 and r["cfg"].get("kBlockN") == 128]
    if match:
        print("## What ptxas reports for the matching config "
              "(fa2_sm80, fp16, d 64, kBlockM = kBlockN = 128)\n")
        print("| config | registers / thread | spill B | shared memory KiB | register file per block KiB | "
              "verdict |")
        print("|---|---|---|---|---|---|")
        for r in sorted(match, key=lambda r: (r["cfg"]["kNWarps"], r["cfg"]["kStages"], r["cfg"]["kWarpsN"],
                                              r["config"])):
            threads = 32 * r["cfg"]["kNWarps"]
            print(f"| {r['config']} | {r['regs']} | {r['spill']} | {r['smem'] / KIB:.1f} | "
                  f"{r['regs'] * threads * 4 / KIB:.0f} | {r['verdict'][:60]} |")
        print(f"\n{len(d64)} configs of the d 64 fp16 space compiled: shared memory "
              f"{min(r['smem'] for r in d64) / KIB:.0f}-{max(r['smem'] for r in d64) / KIB:.0f} KiB.\n")
    d128 = {r["config"]: r
            for r in compile_rows(os.path.join(run_dir, "compile_only_fa2_sm80_bf16_d128.txt"))}
    timed = fixture(os.path.join(here, "..", "..", "tests", "tuner", "data",
                                 "fa2_sm80_h200_bf16_d128_n4096_full.tsv"))
    joined = [(cfg, t, d128[cfg]) for cfg, t in timed.items() if cfg in d128]
    if joined:
        joined.sort(key=lambda x: -x[1])
        print("## The tuner's winners (fa2_sm80, bf16, d 128, n 4096, H200 2026-11-29: "
              "the exhaustive stage A)\n")
        print("| rank | config | TFLOP/s | shared memory KiB | registers | spill B |\n"
              "|---|---|---|---|---|---|")
        for i, (cfg, t, r) in enumerate(joined[:8]):
            print(f"| {i + 1} | {cfg} | {t:.1f} | {r['smem'] / KIB:.1f} | {r['regs']} | {r['spill']} |")
        with open(os.path.join(run_dir, "smem_vs_tflops.dat"), "w") as f:
            f.write("smem_KiB TFLOP/s\n")
            for cfg, t, r in joined:
                f.write(f"{r['smem'] / KIB:.2f} {t:.2f}\n")
        best = joined[0]
        print(f"\nBest: {best[0]} at {best[1]:.1f} TFLOP/s with {best[2]['smem'] / KIB:.0f} KiB "
              "of shared memory.")


if __name__ == "__main__":
    main()
