"""The experiments' CSV files as rows, and fa-bench's verdict on a row. The summarizers in experiments/*/
import it (each puts this folder on sys.path): one place for the rule, so no table shows a failing kernel.

csv_rows(path): the rows of a CSV whose lines starting with '#' are comments (the run's GPU, date, command).
speed_rows(path): fa-bench's rows whose speed may be shown.
passed(row): whether fa-bench counted the row's check as passing. Files written since 2026-12-07 say so in
their 'passed' column; older ones are read by the leading words of the check's text that fa-bench
(tools/fa_bench_main.cpp) wrote for a pass."""
import csv
import sys

# fa-bench's passing check texts before the 'passed' column: its checks' summaries, a check taken from the
# check log, a backward above its checked n (its edge problems checked), a --launch-once row.
LEGACY_PASSING_TEXTS = ("pass", "checked earlier", "not checked at this n", "launched once, not checked")


def csv_rows(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


def passed(row):
    if row.get("passed") is not None:
        return row["passed"] == "true"
    return (row.get("check") or "").startswith(LEGACY_PASSING_TEXTS)


def speed_rows(path):
    """fa-bench's rows in path whose speed may be shown: the check passed and the timing ran (a timing error
    leaves 0 ms). The others are named on stderr, not dropped in silence."""
    kept = []
    for r in csv_rows(path):
        if passed(r) and float(r.get("median_ms") or 0) > 0:
            kept.append(r)
        else:
            print(f"{path}: left out {r.get('family')} d{r.get('head_dim')} n{r.get('seqlen')} "
                  f"{r.get('mask')}: {r.get('check')}", file=sys.stderr)
    return kept
