#!/usr/bin/env bash
# SVG plots of one io_traffic run directory: traffic.svg (GB moved against n, measured and modelled) and,
# when the run has timings and ceilings, roofline.svg. Usage: experiments/io_traffic/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/summarize.py" "$dir" --dat >/dev/null
gnuplot -e "data='$dir/traffic.dat'; out='$dir/traffic.svg'; \
title='DRAM bytes of one forward (bf16, d 128, b = 16384/n, h 16)'; xlabel='n'; ylabel='GB read + written'; \
logy=1" "$here/../lines.gp"
if [ -f "$dir/roofline_ceilings.txt" ] && grep -qv nan "$dir/roofline.dat"; then
  read -r bw peak <"$dir/roofline_ceilings.txt"
  families=$(grep '^# ' "$dir/roofline.dat" | cut -c3- | paste -sd' ')
  gnuplot <<GP
set terminal svg size 900,520 dynamic enhanced font "sans,12" background "white"
set output '$dir/roofline.svg'
set title 'Roofline: forward, bf16, d 128 (ceilings measured in the same run)' noenhanced
set xlabel 'FLOP per DRAM byte' noenhanced
set ylabel 'TFLOP/s' noenhanced
set logscale xy
set grid
set key inside right bottom noenhanced
set format x "10^{%L}"
set format y "10^{%L}"
roof(x) = (x * $bw / 1e12 < $peak / 1e12) ? x * $bw / 1e12 : $peak / 1e12
fams = "$families"
plot [1:1e6] roof(x) with lines lw 2 lc rgb 'black' \
title sprintf('min(%.0f TFLOP/s, %.2f TB/s x intensity)', $peak/1e12, $bw/1e12), \
  for [i=0:words(fams)-1] '$dir/roofline.dat' index i using 1:2 with linespoints lw 2 pt i+5 \
title word(fams, i+1)
GP
fi
