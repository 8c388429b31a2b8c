#!/usr/bin/env bash
# tile_budget: the lesson's shared-memory budget of one query block against what ptxas reports. No GPU:
# fa-tune --compile-only (NVRTC + ptxas resources, the family's shared-memory arithmetic) over fa2_sm80's
# space for fp16 d 64 (the lesson's example) and bf16 d 128 (the tuner fixture's problem), then budget.py.
# ~14 min on the 2-core build machine (2026-12-01), a few minutes on the GPU machine's 16 cores:
#   bash experiments/tile_budget/run.sh     (or: bash scripts/gpu.sh experiment tile_budget)
set -uo pipefail
FL_COMMAND="$0"
source "$(dirname "$0")/../lib.sh"
fl_init tile_budget
db=$fl_work/compile.sqlite
fl_step compile_only_fa2_sm80_fp16_d64 1200 "$fl_bin/fa-tune" --compile-only --arch sm90 --family fa2_sm80 \
  --dtype fp16 --head-dim 64 --seqlen 4096 --causal no --direction fwd --db "$db"
fl_step compile_only_fa2_sm80_bf16_d128 1200 "$fl_bin/fa-tune" --compile-only --arch sm90 --family fa2_sm80 \
  --dtype bf16 --head-dim 128 --seqlen 4096 --causal no --direction fwd --db "$db"
for f in "$fl_work"/compile_only_*.log; do cp "$f" "${f%.log}.txt"; done
python3 "$fl_here/budget.py" "$fl_work" >"$fl_work/table.md" && cat "$fl_work/table.md"
fl_sync
fl_plot
