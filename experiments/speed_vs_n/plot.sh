#!/usr/bin/env bash
# SVG plots of one speed_vs_n run directory (the CSVs run.sh wrote): speed_<direction>_d<d>_<mask>.svg.
# Usage: experiments/speed_vs_n/plot.sh RESULTS_DIR [MORE_DIRS...]  (more: the same run's CSVs kept elsewhere)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/summarize.py" "$@" --dat >"$dir/table.md"
for dat in "$dir"/speed_*.dat; do
  base=$(basename "$dat" .dat)
  IFS=_ read -r _ direction d mask <<<"$base"
  gnuplot -e "data='$dat'; out='$dir/$base.svg'; title='$direction TFLOP/s against n ($d, $mask, bf16)'; \
xlabel='n (b = 16384/n, h = 2048/d; n > 16384: b = 1)'; ylabel='TFLOP/s'" "$here/../lines.gp"
done
