#!/usr/bin/env bash
# online_softmax_explorer: fa-explain's walk-throughs of the lesson's online softmax, one file each (no GPU:
# this runs anywhere the binaries are; the committed outputs ran on the build machine). Each walk-through is
# NAME.log (the text) and NAME.csv (the same trace as data, fa-explain --csv); plot.sh draws the CSVs whose
# key blocks tell a story.
#   bash experiments/online_softmax_explorer/run.sh            (output under $OUT/online_softmax_explorer)
set -uo pipefail
FL_COMMAND="$0"
source "$(dirname "$0")/../lib.sh"
fl_init online_softmax_explorer
lesson=(--scores 1,3,2,5,0.5,4 --values 10,20,30,40,50,60)
x() { local name=$1; shift; fl_step "$name" 60 "$fl_bin/fa-explain" "$@" --csv "$name.csv"; }
x lesson_block2_all_mutants "${lesson[@]}" --block 2 --mutant all
x lesson_block2_fp32 "${lesson[@]}" --block 2 --precision fp32
x lesson_block1 "${lesson[@]}" --block 1 --mutant unrescaled-o,unrescaled-l
x lesson_block3 "${lesson[@]}" --block 3 --mutant unrescaled-o,unrescaled-l
x lesson_block6 "${lesson[@]}" --block 6 --mutant unrescaled-o,normalize-in-loop
x lesson_last_to_first "${lesson[@]}" --block 2 --key-order last-to-first --mutant unrescaled-o,stale-max
x vector_values --scores 0,1,4,2 --values 1,0,0,1,1,1,-1,2 --head-dim 2 --block 2 --mutant unrescaled-o
x masked_first_block --scores=-inf,-inf,1,2 --values 1,2,3,4 --block 2 --mutant masked-row-nan
x all_negative_fp32 --family all_negative --keys 64 --head-dim 16 --block 16 --precision fp32 \
  --mutant m-init-zero
x ragged_tail_fp32 --family ragged_tail --keys 32 --head-dim 16 --block 16 --precision fp32 \
  --mutant tail-unmasked
x causal_row2 --family normal --causal --keys 16 --head-dim 8 --block 4 --row 2 --mutant causal-diagonal
x softmax_scale --scores 1,3,2,5,0.5,4 --values 10,20,30,40,50,60 --block 2 --softmax-scale 0.5 \
  --mutant missing-scale
fl_plot
