#!/usr/bin/env bash
# SVG plots of one recomputation run directory: recompute_bwd_ms.svg, recompute_memory.svg.
# Usage: experiments/recomputation/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/summarize.py" "$dir" --dat >/dev/null
[ -f "$dir/recompute_bwd_ms.dat" ] &&
  gnuplot -e "data='$dir/recompute_bwd_ms.dat'; out='$dir/recompute_bwd_ms.svg'; \
title='backward time (bf16, d 128, b = 16384/n, h 16, non-causal)'; xlabel='n'; ylabel='ms'; logy=1" \
    "$here/../lines.gp"
[ -f "$dir/recompute_memory.dat" ] &&
  gnuplot -e "data='$dir/recompute_memory.dat'; out='$dir/recompute_memory.svg'; \
title='forward + backward device memory'; xlabel='n'; ylabel='GiB'; logy=1" "$here/../lines.gp"
exit 0
