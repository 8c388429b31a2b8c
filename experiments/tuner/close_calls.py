#!/usr/bin/env python3
"""Close calls in a tuning database: problems where a config that lost by its median has a p20 faster than
the winner's median by more than MARGIN, so the winner may rest on which of two timing modes each median
fell in (card_transfer at n 16384: 30 runs of one config fell in two modes about 7% apart, and the median
took either). For each it prints the winner, that loser and the command that settles it on the card
(experiments/card_transfer/alternate.sh: the two head to head; $OUT set, as on the device machine). Then
the best rows that a stored measurement of the same kernel source beats (see STALE_BEST).

Usage: close_calls.py DB [--gpu NAME] [--margin 0.03]   (DB: an fa-tune SQLite database)"""
import argparse
import os
import sqlite3
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)

# A loser's p20 this much under the winner's median counts: the two-mode gaps seen were 7-12%, and two
# timings of one config in one call differ by up to ~3% (card_transfer: fa-tune against fa-bench, n <= 8192).
DEFAULT_MARGIN = 0.03

QUERY = """
select g.name, p.dtype, p.head_dim, p.causal, p.seqlen_q, p.direction, m.family, m.config, m.median_ms,
       m.p20_ms, b.config, b.median_ms
from measurements m
join best_configs b on b.gpu_id = m.gpu_id and b.problem_id = m.problem_id and b.family = m.family
join problems p on p.problem_id = m.problem_id
join gpus g on g.gpu_id = m.gpu_id
where m.verdict = 'ok' and m.config != b.config and m.median_ms > b.median_ms
  and m.p20_ms < b.median_ms * (1 - :margin) and (:gpu is null or g.name = :gpu)
"""


# Best rows slower than a stored measurement of the same family, problem, GPU and kernel source: a best that
# a later run recorded without the faster row among its candidates. Before 2026-12-04's resume fix a rerun
# answered only what its strategy proposed; since, a resume answers the stored rows that are points of the
# space (tuner/tune/stored_rows.hpp), so a row spelled before a parameter existed (a warm start before
# 2026-12-07's fix) is never among them. ship_grid.py keeps the faster shipped config in db/seed.
STALE_BEST = """
select b.family, p.dtype, p.head_dim, p.causal, p.seqlen_q, p.direction, b.config, b.median_ms, m.config,
       min(m.median_ms)
from best_configs b
join problems p on p.problem_id = b.problem_id
join measurements m on m.gpu_id = b.gpu_id and m.problem_id = b.problem_id and m.family = b.family
  and m.source_hash = b.source_hash and m.verdict = 'ok'
join gpus g on g.gpu_id = b.gpu_id
where :gpu is null or g.name = :gpu
group by b.gpu_id, b.problem_id, b.family
having min(m.median_ms) < b.median_ms * 0.999
"""


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--gpu", help="only this GPU's rows (the gpus table's name, e.g. 'NVIDIA H200')")
    ap.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                    help=f"how far under the winner's median a loser's p20 must be ({DEFAULT_MARGIN})")
    args = ap.parse_args()
    if not os.path.isfile(args.db):
        fail(f"{args.db}: no such file")
    if not 0.0 <= args.margin < 1.0:
        fail(f"--margin {args.margin}: a fraction in [0, 1)")
    return args


def open_database(db):
    """db read-only, once checked to hold fa-tune's tables."""
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        connection.execute("select 1 from best_configs, measurements limit 1").fetchall()
    except sqlite3.DatabaseError as error:
        fail(f"{db}: not an fa-tune database ({error})")
    return connection


def close_calls(connection, gpu, margin):
    """{problem key: (winner config, winner median, loser config, loser median, loser p20)}, the loser with
    the fastest p20 of each problem."""
    calls = {}
    for row in connection.execute(QUERY, dict(gpu=gpu, margin=margin)):
        name, dtype, d, causal, n, direction, family, config, median, p20, best, best_median = row
        key = (name, family, dtype, d, "causal" if causal else "full", n, direction)
        if key not in calls or p20 < calls[key][4]:
            calls[key] = (best, best_median, config, median, p20)
    return calls


def stale_best_rows(connection, gpu):
    """[(family, dtype, d, causal, n, direction, best config, its median, faster config, its median)]."""
    return connection.execute(STALE_BEST, dict(gpu=gpu)).fetchall()


def main():
    args = parse_args()
    connection = open_database(args.db)
    calls = close_calls(connection, args.gpu, args.margin)
    print(f"{len(calls)} close calls (a loser's p20 more than {args.margin:.0%} under the winner's median)")
    for key, (best, best_ms, config, ms, p20) in sorted(calls.items()):
        gpu, family, dtype, d, mask, n, direction = key
        print(f"\n{gpu} {family} {dtype} d{d} {mask} n{n} {direction}: winner {best_ms:.3f} ms, loser median "
              f"{ms:.3f} ms, p20 {p20:.3f} ms")
        label = f"{family}_{dtype}_d{d}_{mask}_n{n}_{direction}"
        problem = (f"--family {family} --dtype {dtype} --head-dim {d} --seqlen {n} "
                   f"--causal {'yes' if mask == 'causal' else 'no'} --direction {direction}")
        print(f"  CARRY=$PWD/.carry/grid bash experiments/card_transfer/alternate.sh {label} \\\n"
              f"    \"{problem}\" \\\n    {best} \\\n    {config}")
    stale = stale_best_rows(connection, args.gpu)
    print(f"\n{len(stale)} best rows slower than a stored measurement of the same kernel source "
          "(db/seed keeps the faster config: ship_grid.py)")
    for family, dtype, d, causal, n, direction, best, best_ms, faster, faster_ms in stale:
        mask = "causal" if causal else "full"
        print(f"  {family} {dtype} d{d} {mask} n{n} {direction}: best row {best_ms:.4f} ms, stored "
              f"{faster_ms:.4f} ms ({best_ms / faster_ms:.3f}x): {faster}")


if __name__ == "__main__":
    main()
