#!/usr/bin/env bash
# SVG plots of one memory_vs_n run directory: memory_fwd.svg, memory_fwdbwd.svg (log-log: n^2 against n).
# Usage: experiments/memory_vs_n/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/summarize.py" "$dir" --dat >/dev/null
for kind in fwd fwdbwd; do
  [ -f "$dir/memory_$kind.dat" ] || continue
  gnuplot -e "data='$dir/memory_$kind.dat'; out='$dir/memory_$kind.svg'; \
title='device memory, $kind (b 1, h 16, d 128, bf16)'; xlabel='n'; ylabel='GiB'; logy=1" "$here/../lines.gp"
done
