# Session 10 (2026-12-03), call 1: issue 17's PLAN calls 8 and 9 (speed_vs_n at d 64) and call 5's split
# sweep past 4 splits. In order of weight; every step resumable on a warm machine (experiments/lib.sh), so
# call 2 (2026-12-03-h200-s10-call2.sh) finishes what this one's budget cut. From the repository root of the
# device's copy, .carry/gpu carried: bash experiments/kernels/results/2026-12-03-h200-s10-call1.sh
set -uo pipefail
t_end=$((SECONDS + ${BUDGET:-560}))
left() { echo $((t_end - SECONDS > 5 ? t_end - SECONDS : 5)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
date -u +%FT%TZ
# PLAN call 8 and call 9's forward: the fused kernels, naive, fa1 and PyTorch's backends at d 64.
HEAD_DIMS=64 FWD_FAMILIES="naive fa2_sm80 fa3_sm90 fa1" BWD_FAMILIES="" LONG_SEQLENS="" \
  timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n
# PLAN call 5's split sweep (the shapes ran in sessions 8 and 9).
SHAPES="" timeout -k 5 "$(left)" bash scripts/gpu.sh experiment decode
# PLAN call 9's backward: FA2's and FA1's backward at d 64.
HEAD_DIMS=64 FWD_FAMILIES="" BWD_FAMILIES="fa2_sm80_bwd fa1_bwd" LONG_SEQLENS="" PEERS="" \
  timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n
date -u +%FT%TZ
