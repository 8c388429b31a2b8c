#!/usr/bin/env bash
# SVG plots of one stability results directory: vs_n_<family>_<precision>_<O precision>.svg,
# vs_block_n_<family>_<precision>.svg (n = 4096) and gpu_<dtype>.svg. Usage: plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/summarize.py" "$dir" --dat >/dev/null
shopt -s nullglob
for dat in "$dir"/vs_n_*.dat; do
  base=$(basename "$dat" .dat)
  gnuplot -e "data='$dat'; out='$dir/$base.svg'; \
title='RMSE of O against float64: ${base#vs_n_}'; xlabel='n'; ylabel='RMSE of O'; logy=1" "$here/../lines.gp"
done
for dat in "$dir"/vs_block_n_*.dat; do
  base=$(basename "$dat" .dat)
  gnuplot -e "data='$dat'; out='$dir/$base.svg'; \
title='RMSE of O at n = 4096 against kBlockN: ${base#vs_block_n_}'; xlabel='kBlockN'; ylabel='RMSE of O'; \
logy=1" "$here/../lines.gp"
done
for dat in "$dir"/gpu_*.dat; do
  base=$(basename "$dat" .dat)
  gnuplot -e "data='$dat'; out='$dir/$base.svg'; \
title='GPU: max |O - float64|, PyTorch backends (${base#gpu_})'; xlabel='n'; ylabel='max abs deviation'; \
logy=1" "$here/../lines.gp"
done
