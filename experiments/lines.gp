# One line plot per data file, shared by the experiments' plot.sh scripts. The data file: a header line
# "x name1 name2 ..." then one row per x, NaN where a series has no point. Variables (gnuplot -e):
#   data, out (SVG path), title, xlabel, ylabel; logx, logy (1 for a log axis, default 1 and 0).
if (!exists("logx")) logx = 1
if (!exists("logy")) logy = 0
set terminal svg size 900,480 dynamic enhanced font "sans,12" background "white"
set output out
set title title noenhanced
set xlabel xlabel noenhanced
set ylabel ylabel noenhanced
set key outside right top noenhanced
set grid
if (logx) set logscale x 2
if (logy) set logscale y; if (logy) set format y "%.0e"
set datafile missing "NaN"
columns = system("head -n 1 '" . data . "' | wc -w") + 0
plot for [i=2:columns] data using 1:i with linespoints lw 2 pt (i % 7) + 1 title columnheader(i)
