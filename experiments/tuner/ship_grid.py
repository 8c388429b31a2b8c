#!/usr/bin/env python3
"""After a `scripts/gpu.sh grid` device call: carry its database into the next call and ship its winners.

    python3 experiments/tuner/ship_grid.py FILES_AT [--seed db/seed/best_configs.tsv]
                                           [--carry .carry/tune/fa-tune.sqlite] [--raw experiments/tuner/raw]
                                           [--allow-replay]

FILES_AT is the folder the call's $OUT came back to (it holds fa-tune.sqlite and grid_best_configs.tsv).
1. fa-tune.sqlite is copied to --carry (write-then-rename): name that path in the next call's carry and the
   grid resumes from it.
2. grid_best_configs.tsv's rows are merged into --seed: a row for the same GPU, family and problem (dtype,
   head dim, mask, direction, batch, heads, n) replaces the shipped one when it names the same config (a
   re-measurement) or runs faster; a slower row with another config leaves the shipped one in place (a
   fresh database's first call measures only defaults: on 2026-12-02 those would have replaced winners
   tuned 1.06-1.08x faster). The others are added, and the export's provenance lines ('#': GPU, driver,
   date, command) are kept above the header. Rows measured by a replay ("replay of FILE") are refused
   unless --allow-replay (the offline test uses it).
3. The call's raw results (grid.summary.txt, grid_best_configs.tsv, grid.tgz: every line's table, JSON and
   report; fa-tune.sqlite, ~100 KiB per 10 candidates) are copied to --raw/<date of the export>-grid-<time>/,
   to commit beside the seed file: a new checkout resumes the grid from the latest committed database
   (copy it to --carry) when this machine's copy is gone. The other raw folders' databases whose every
   measurement this one holds (the calls it resumed from) are removed from the tree: each call's copy is
   its predecessors plus ~0.1-0.4 MiB, and by 2026-12-04 eleven copies (15 MiB) kept the tree and the
   test binaries (.carry/gpu) over the 64 MiB a device call carries. Git history keeps them; `git add -A`
   the raw folder to commit the removals.
Exit 2 with one line for a missing input or a header that is not the seed file's.
"""
import argparse
import os
import shutil
import sqlite3
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from bad_input import fail  # noqa: E402  (experiments/bad_input.py)

# Columns that name a row: the GPU, the family and the problem (db/seed_configs.cpp's order).
KEY_COLUMNS = ("gpu", "family", "dtype", "head_dim", "causal", "direction", "batch", "heads_q", "heads_kv",
               "seqlen_q", "seqlen_k")
REPLAY_PREFIX = "replay of "  # tuner/tune/replay_backend.hpp's kReplayGpuPrefix


def read_seed(path):
    """(comment lines before the header, header, rows as lists of fields)."""
    comments, header, rows = [], None, []
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if not line.strip():
                continue
            if line.startswith("#"):
                if header is None:
                    comments.append(line)
                continue
            if header is None:
                header = line.split("\t")
                continue
            rows.append(line.split("\t"))
    if header is None:
        fail(f"{path}: no header line")
    for row in rows:
        if len(row) != len(header):
            fail(f"{path}: a row has {len(row)} fields, its header {len(header)}")
    return comments, header, rows


# A measurement of `old` the newer database lacks: same GPU, NVRTC, kernel source, family, config and problem
# (their ids are each database's own, so the GPU and the problem are compared by their columns).
MISSING_MEASUREMENTS = """
SELECT count(*) FROM old.measurements om
JOIN old.gpus og ON og.gpu_id = om.gpu_id
JOIN old.problems op ON op.problem_id = om.problem_id
WHERE NOT EXISTS (
  SELECT 1 FROM main.measurements m
  JOIN main.gpus g ON g.gpu_id = m.gpu_id
  JOIN main.problems p ON p.problem_id = m.problem_id
  WHERE g.name = og.name AND g.cc_major = og.cc_major AND g.cc_minor = og.cc_minor
    AND g.sm_count = og.sm_count AND g.driver_version = og.driver_version
    AND m.nvrtc_version = om.nvrtc_version AND m.source_hash = om.source_hash AND m.family = om.family
    AND m.config = om.config AND p.batch = op.batch AND p.heads_q = op.heads_q AND p.heads_kv = op.heads_kv
    AND p.seqlen_q = op.seqlen_q AND p.seqlen_k = op.seqlen_k AND p.head_dim = op.head_dim
    AND p.dtype = op.dtype AND p.causal = op.causal AND p.direction = op.direction)
"""


def holds_every_measurement(newer, older):
    """Whether `newer` has a row for each of `older`'s measurements (False for anything unreadable)."""
    try:
        con = sqlite3.connect(f"file:{os.path.abspath(newer)}?mode=ro", uri=True)
        try:
            con.execute("ATTACH DATABASE ? AS old", (f"file:{os.path.abspath(older)}?mode=ro",))
            return con.execute(MISSING_MEASUREMENTS).fetchone()[0] == 0
        finally:
            con.close()
    except sqlite3.Error:
        return False


def remove_contained_databases(raw_root, newest):
    """Removes every raw database but `newest` whose measurements `newest` all holds; returns their count."""
    removed = 0
    for folder in sorted(os.listdir(raw_root)):
        path = os.path.join(raw_root, folder, "fa-tune.sqlite")
        if not os.path.isfile(path) or os.path.samefile(path, newest):
            continue
        if holds_every_measurement(newest, path):
            os.remove(path)
            removed += 1
    return removed


def write_atomically(path, text):
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".ship_grid.")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files_at")
    parser.add_argument("--seed", default="db/seed/best_configs.tsv")
    parser.add_argument("--carry", default=".carry/tune/fa-tune.sqlite")
    parser.add_argument("--raw", default="experiments/tuner/raw")
    parser.add_argument("--allow-replay", action="store_true")
    args = parser.parse_args()

    database = os.path.join(args.files_at, "fa-tune.sqlite")
    export = os.path.join(args.files_at, "grid_best_configs.tsv")
    for path in (database, args.seed):
        if not os.path.isfile(path):
            fail(f"{path} is not a file")

    shipped_comments, header, shipped = read_seed(args.seed)
    # A call whose lines all went unreached exports nothing: its database is still carried on.
    export_comments, export_header, exported = ([], header, [])
    if os.path.isfile(export):
        export_comments, export_header, exported = read_seed(export)
    if export_header != header:
        fail(f"{export}: its header is not {args.seed}'s (another seed format): not merged")
    key_index = [header.index(c) for c in KEY_COLUMNS]
    gpu = header.index("gpu")
    if not args.allow_replay:
        for row in exported:
            if row[gpu].startswith(REPLAY_PREFIX):
                fail(f"{export}: rows measured by a replay ({row[gpu]}), not on a GPU: not shipped")

    config, tflops = header.index("config"), header.index("tflops")
    merged = {tuple(r[i] for i in key_index): r for r in shipped}
    replaced = added = kept_faster = 0
    for row in exported:
        key = tuple(row[i] for i in key_index)
        old = merged.get(key)
        if old is None:
            added += 1
        elif old[config] == row[config] or float(row[tflops]) > float(old[tflops]):
            replaced += 1
        else:
            kept_faster += 1
            continue
        merged[key] = row
    comments = shipped_comments + [c for c in export_comments if c not in shipped_comments]
    text = "\n".join(comments + ["\t".join(header)] + ["\t".join(r) for r in merged.values()]) + "\n"
    write_atomically(args.seed, text)

    carry_folder = os.path.dirname(os.path.abspath(args.carry))
    os.makedirs(carry_folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=carry_folder, prefix=".ship_grid.")
    os.close(fd)
    shutil.copyfile(database, tmp)
    os.replace(tmp, args.carry)
    # "# 2026-12-01T15:04:05Z, ...": the export's first provenance line names the call's time.
    stamp = export_comments[0][2:22].replace(":", "") if export_comments else "undated"
    raw = os.path.join(args.raw, stamp.replace("T", "-grid-", 1))
    os.makedirs(raw, exist_ok=True)
    kept = []
    for name in ("grid.summary.txt", "grid_best_configs.tsv", "grid.tgz", "fa-tune.sqlite"):
        if os.path.isfile(os.path.join(args.files_at, name)):
            shutil.copyfile(os.path.join(args.files_at, name), os.path.join(raw, name))
            kept.append(name)
    removed = 0
    if "fa-tune.sqlite" in kept:
        removed = remove_contained_databases(args.raw, os.path.join(raw, "fa-tune.sqlite"))
    faster = f", {kept_faster} kept: the shipped config is faster" if kept_faster else ""
    print(f"{args.seed}: {len(exported)} rows from the grid ({replaced} replaced, {added} new{faster}), "
          f"{len(merged)} in all")
    print(f"{args.carry}: {os.path.getsize(args.carry) // 1024} KiB (carry it in the next grid call)")
    print(f"{raw}: {', '.join(kept)} (commit with the seed file)")
    if removed:
        print(f"{args.raw}: {removed} older fa-tune.sqlite removed, every measurement of theirs is in this "
              f"one (git history keeps them: git add -A {args.raw})")


if __name__ == "__main__":
    main()
