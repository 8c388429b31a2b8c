#!/usr/bin/env bash
# tile_budget.svg: shared memory against TFLOP/s of every timed config of the tuner's stage A (fa2_sm80, bf16,
# d 128, n 4096, H200), with the lesson's 97 KiB and the 227 KiB limit. Usage: plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
python3 "$here/budget.py" "$dir" >"$dir/table.md"
[ -f "$dir/smem_vs_tflops.dat" ] || exit 0
gnuplot <<GP
set terminal svg size 760,480 dynamic enhanced font "sans,12" background "white"
set output '$dir/tile_budget.svg'
set title 'fa2\_sm80 bf16 d 128 n 4096 (H200): shared memory per block against speed, 126 configs'
set xlabel 'shared memory per block (KiB, ptxas + the family arithmetic)'
set ylabel 'TFLOP/s (tuner stage A, 2026-11-29)'
set grid
set key bottom right
set arrow from 97,graph 0 to 97,graph 1 nohead dt 2 lc rgb 'red'
set label "lesson's 97 KiB (all in shared memory)" at 99,graph 0.95 textcolor rgb 'red'
set arrow from 227,graph 0 to 227,graph 1 nohead dt 2 lc rgb 'black'
set label '227 KiB limit' at 200,graph 0.05
plot [0:240] '$dir/smem_vs_tflops.dat' using 1:2 with points pt 7 ps 0.8 title 'one config'
GP
