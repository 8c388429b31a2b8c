#!/usr/bin/env bash
# SVG plots of one decode run directory: decode_b<B>_nq<Q>.svg, K/V GB/s against n_k per backend.
# Usage: experiments/decode/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
for csvfile in "$dir"/decode_b*.csv; do
  [ -f "$csvfile" ] || continue
  base=$(basename "$csvfile" .csv)
  for nq in $(grep -v '^#' "$csvfile" | tail -n +2 | cut -d, -f5 | sort -nu); do
    dat="$dir/${base}_nq$nq.dat"
    python3 - "$csvfile" "$nq" >"$dat" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#")) if r["nq"] == sys.argv[2]]
names = sorted({r["backend"] for r in rows})
nks = sorted({int(r["nk"]) for r in rows})
val = {(r["backend"], int(r["nk"])): r["kv_gbps"] for r in rows}
print("nk " + " ".join(names))
for nk in nks:
    print(f"{nk} " + " ".join(val.get((m, nk), "NaN") for m in names))
PY
    gnuplot -e "data='$dat'; out='$dir/${base}_nq$nq.svg'; title='decode, $nq query rows: K/V read bandwidth ($base)'; xlabel='n_k (KV cache length)'; ylabel='GB/s of K and V'" "$here/../lines.gp"
  done
done
