#!/usr/bin/env bash
# SVG plots of the walk-throughs whose key blocks tell a story (the CSVs run.sh wrote with fa-explain --csv):
# <walk-through>.svg, the output so far after each key block, one line per variant (correct and mutants),
# against the float64 answer, above the running max m and the running sum l (trace_dat.py, trace.gp).
# Usage: experiments/online_softmax_explorer/plot.sh RESULTS_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
# plot WALK TITLE: one walk-through (a CSV that is not there, as in a results folder of before --csv, is
# skipped with a line).
plot() {
  local walk=$1 title=$2 vars
  if [ ! -f "$dir/$walk.csv" ]; then
    echo "plot.sh: no $walk.csv in $dir: skipped"
    return 0
  fi
  vars=$(python3 "$here/trace_dat.py" "$dir/$walk.csv")
  gnuplot -e "base='$dir/$walk'; out='$dir/$walk.svg'; title=\"$title\"; $vars" "$here/trace.gp"
}
plot lesson_block2_all_mutants \
  "The lesson's row (scores 1,3,2,5,0.5,4; values 10..60), blocks of 2: every forward mutant"
plot lesson_block1 "The lesson's row, one key per block: the max rises at keys 1 and 3"
plot lesson_last_to_first "The lesson's row, blocks of 2 walked last to first (as fa2_sm80 does)"
plot softmax_scale "The lesson's row with softmax scale 0.5: missing-scale ends at the scale-1 answer"
plot all_negative_fp32 \
  "all_negative (every scaled score below -100), fp32: a running max started at 0 underflows every weight"
plot ragged_tail_fp32 \
  "ragged_tail (33 keys in blocks of 16), fp32: unmasked padding scores 0 and outweighs the real keys"
