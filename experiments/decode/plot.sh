#!/usr/bin/env bash
# SVG plots of one decode run directory (after merge.py): decode_<shape>_nq<Q>.svg, K/V GB/s against n_k per
# backend (ours and PyTorch's), and sweep.svg, flash_decode's GB/s against its split count.
# Usage: experiments/decode/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
for csvfile in "$dir"/decode_*.csv; do
  [ -f "$csvfile" ] || continue
  base=$(basename "$csvfile" .csv)
  for nq in $(python3 -c "import csv,sys; \
print(' '.join(sorted({r['nq'] for r in csv.DictReader(open(sys.argv[1]))}, key=int)))" "$csvfile"); do
    dat="$dir/${base}_nq$nq.dat"
    python3 - "$csvfile" "$nq" >"$dat" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["nq"] == sys.argv[2] and r["kv_gbps"]]
names = sorted({r["backend"] for r in rows})
nks = sorted({int(r["nk"]) for r in rows})
val = {(r["backend"], int(r["nk"])): r["kv_gbps"] for r in rows}
print("nk " + " ".join(names))
for nk in nks:
    print(f"{nk} " + " ".join(val.get((m, nk), "NaN") for m in names))
PY
    gnuplot -e "data='$dat'; out='$dir/${base}_nq$nq.svg'; \
title='decode, $nq query rows: K/V read bandwidth ($base)'; xlabel='n_k (KV cache length)'; \
ylabel='GB/s of K and V'" "$here/../lines.gp"
  done
done
if [ -f "$dir/sweep.csv" ]; then
  python3 -c "
import csv, sys
print('splits flash_decode')
for r in csv.DictReader(open(sys.argv[1])):
    print(r['splits'], r['kv_gbps'] or 'NaN')" "$dir/sweep.csv" >"$dir/sweep.dat"
  gnuplot -e "data='$dir/sweep.dat'; out='$dir/sweep.svg'; \
title='flash_decode: K/V read bandwidth against the split count'; xlabel='kSplits'; \
ylabel='GB/s of K and V'" "$here/../lines.gp"
fi
