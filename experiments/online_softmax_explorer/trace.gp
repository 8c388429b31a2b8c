# One fa-explain walk-through (trace_dat.py's three data files, lines.gp's format) as three panels that share
# the key-block axis: the output so far per variant against the float64 answer (a dashed line), then the
# running max m, then the running sum l. lines.gp's look (terminal, grid, key outside right), but panels, a
# reference line and labelled key blocks, which one line plot does not have. Variables (gnuplot -e):
#   base (data files base.output.dat, base.m.dat, base.l.dat), out (SVG path), title; from trace_dat.py:
#   answer, steps (key blocks visited), xtics_cmd, note (mutants identical to correct, or ''), dim_label
#   (which component, or ''), lts (each data column's line type: a variant keeps its colour in every plot),
#   m_step, l_step (the small panels' tic steps, about four a panel; 0: gnuplot's own).
set terminal svg size 900,760 dynamic enhanced font "sans,12" background "white"
set output out
set datafile missing "NaN"
set grid
set pointsize 0.8
# The key: the answer, correct, then the mutants in catalogue order (they are drawn in reverse, see below).
set key outside right top noenhanced invert
# correct in black, drawn last so that it sits on top of any mutant that coincides with it for a while.
set linetype 1 lc rgb "black" lw 3 pt 7 ps 0.9
set linetype 2 lc rgb "#d62728" lw 2 pt 5
set linetype 3 lc rgb "#1f77b4" lw 2 pt 9
set linetype 4 lc rgb "#2ca02c" lw 2 pt 11
set linetype 5 lc rgb "#ff7f0e" lw 2 pt 13
set linetype 6 lc rgb "#9467bd" lw 2 pt 4
set linetype 7 lc rgb "#8c564b" lw 2 pt 6
set linetype 8 lc rgb "#e377c2" lw 2 pt 8
set linetype 9 lc rgb "#17becf" lw 2 pt 10
set linetype 10 lc rgb "#6b8e23" lw 2 pt 12
set linetype 11 lc rgb "#b8860b" lw 2 pt 14
set linetype 12 lc rgb "#000080" lw 2 pt 3
set linetype 13 lc rgb "#aec7e8" lw 2 pt 1
set linetype cycle 13
output_data = base . ".output.dat"
columns = system("head -n 1 '" . output_data . "' | wc -w") + 0
# The panels' left and right edges fixed, so that their block axes line up whatever the tic labels' widths.
left = 0.10
right = 0.70
set multiplot title title noenhanced
set lmargin at screen left
set rmargin at screen right
set xrange [-0.3 : steps - 0.7]
set offsets 0, 0, graph 0.06, graph 0.06
# One tic per key block (steps 0, 1, ...); the block's index and keys are written under the last panel only.
set xtics 1
set format x ""

# 1. The output so far (acc / l after each block) and the answer.
set tmargin at screen 0.91
set bmargin at screen 0.50
set ylabel (dim_label eq "" ? "output so far" : "output so far (" . dim_label . ")") noenhanced
# Beside the lower panels, clear of a key of every forward mutant: the mutants that correct's line stands for.
if (note ne "") set label 1 note at screen right + 0.04, screen 0.45 left front font ",11" noenhanced
plot for [i=columns:2:-1] output_data using 1:i with linespoints lt (word(lts, i - 1) + 0) \
       title columnheader(i), \
     answer with lines dt 2 lw 2 lc rgb "#555555" title sprintf("float64 answer %.6g", answer)
unset label 1

# 2. The running max m (a rise rescales everything accumulated before it).
set key off
set tmargin at screen 0.47
set bmargin at screen 0.31
set ylabel "running max m"
if (m_step > 0) set ytics m_step; else set ytics autofreq
plot for [i=columns:2:-1] base . ".m.dat" using 1:i with linespoints lt (word(lts, i - 1) + 0) notitle

# 3. The running sum l.
set tmargin at screen 0.28
set bmargin at screen 0.15
set format x "%g"
@xtics_cmd
set xlabel "key block, in the order visited (its keys)" offset 0, -1
set ylabel "running sum l"
set yrange [0:*]
if (l_step > 0) set ytics l_step; else set ytics autofreq
plot for [i=columns:2:-1] base . ".l.dat" using 1:i with linespoints lt (word(lts, i - 1) + 0) notitle
unset multiplot
