#!/usr/bin/env python3
"""card_transfer's table: does the seed config of one card hold on the card the run was made on?

    summarize.py WORK [SEED_GPU]               table.md from WORK's tune.tsv, default.csv, shipped_*.csv
                                              (SEED_GPU: the card the seeds were tuned on, NVIDIA H200)
    summarize.py --seed-config SEEDS GPU FAMILY DTYPE DIRECTION HEAD_DIM CAUSAL N
                                              the seed row's config for that headline problem (run.sh uses
                                              it; prints nothing when the seed file has none)

Per problem (head dim, mask): this card's default as fa-tune and fa-bench timed it (the two protocols, same
call), its best of the tuning budget, and the seed card's config timed here; seed / best says how much of
this card's best of BUDGET the shipped config gives (1.00: the seed is as good as this card's search found).
"""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bench_csv import speed_rows  # noqa: E402  (experiments/bench_csv.py)
from headline import headline_shape  # noqa: E402  (experiments/headline.py)


def seed_config(seeds, gpu, family, dtype, direction, head_dim, causal, n):
    with open(seeds, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f if line.strip() and not line.startswith("#")]
    header, rows = rows[0], rows[1:]
    col = {name: i for i, name in enumerate(header)}
    batch, heads = headline_shape(int(n), int(head_dim))
    want = {"gpu": gpu, "family": family, "dtype": dtype, "head_dim": str(head_dim),
            "causal": "1" if causal == "yes" else "0", "direction": direction, "seqlen_q": str(n),
            "seqlen_k": str(n), "batch": str(batch), "heads_q": str(heads)}
    for row in rows:
        if all(row[col[k]] == v for k, v in want.items()):
            return row[col["config"]]
    return ""


def problem_of_tune(text):
    """'b4 h16/16 n4096x4096 d128 bf16 full fwd' -> (128, 'full', 'bf16 fwd'): the key, and what was timed."""
    m = re.search(r" d(\d+) (\S+) (full|causal) (fwd|bwd)", text)
    return (int(m.group(1)), m.group(3), f"{m.group(2)} {m.group(4)}") if m else None


def read_bench(path):
    """{(head dim, mask): (config, TFLOP/s)} of the rows that passed and were timed."""
    return {(int(r["head_dim"]), r["mask"]): (r["config"], float(r["tflops"])) for r in speed_rows(path)}


def main():
    if len(sys.argv) == 10 and sys.argv[1] == "--seed-config":
        print(seed_config(*sys.argv[2:]))
        return
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    work, seed_gpu = sys.argv[1], (sys.argv[2] if len(sys.argv) == 3 else "NVIDIA H200")
    tuned, problems = {}, set()
    with open(os.path.join(work, "tune.tsv"), encoding="utf-8") as f:
        lines = f.read().splitlines()
    gpu_line = next((l[2:] for l in lines if l.startswith("# GPU ")), "GPU unknown")
    header = next(l for l in lines if l.startswith("family\t")).split("\t")
    col = {name: i for i, name in enumerate(header)}
    for line in lines[lines.index("\t".join(header)) + 1:]:
        row = line.split("\t")
        problem = problem_of_tune(row[col["problem"]])
        if problem is None or row[col["verdict"]] != "ok" or not row[col["tflops"]]:
            continue
        d, mask, timed = problem
        tuned.setdefault((d, mask), []).append((row[col["config"]], float(row[col["tflops"]])))
        problems.add(f"{row[col['family']]} {timed}")
    default = read_bench(os.path.join(work, "default.csv"))
    shipped = {}
    for path in sorted(glob.glob(os.path.join(work, "shipped_*.csv"))):
        shipped.update(read_bench(path))

    problems_timed = ", ".join(sorted(problems)) or "-"
    print(f"# card_transfer: {seed_gpu}'s seed configs of {problems_timed} on {gpu_line}\n")
    print("| problem | default, fa-tune | default, fa-bench | best of search | evaluated | seed config here "
          "| seed / best | seed / default | best config here |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []

    def fmt(x, digits=1):
        return f"{x:.{digits}f}" if x is not None else "-"

    for key in sorted(set(tuned) | set(shipped)):
        d, mask = key
        rows = tuned.get(key, [])
        bench_default = default.get(key)
        tune_default = next((t for c, t in rows if bench_default and c == bench_default[0]), None)
        best = max(rows, key=lambda r: r[1]) if rows else None
        seed = shipped.get(key)
        # Against the better of this card's search and the seed config: the seed may beat a search of BUDGET.
        ratio = seed[1] / max(seed[1], best[1] if best else 0.0) if seed else None
        if ratio:
            ratios.append(ratio)
        cells = [f"d{d} {mask}", fmt(tune_default), fmt(bench_default and bench_default[1]),
                 fmt(best and best[1]), str(len(rows)), fmt(seed and seed[1]), fmt(ratio, 3),
                 fmt(seed[1] / bench_default[1] if seed and bench_default else None, 3),
                 f"`{best[0]}`" if best else "-"]
        print("| " + " | ".join(cells) + " |")
    if ratios:
        print(f"\nseed / best (the better of this card's search and the seed config, both timed here): "
              f"min {min(ratios):.3f}, mean {sum(ratios) / len(ratios):.3f} over {len(ratios)} problems")


if __name__ == "__main__":
    main()
