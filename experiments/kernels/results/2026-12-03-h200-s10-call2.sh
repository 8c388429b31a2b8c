# Session 10 (2026-12-03), call 2: issue 17's PLAN calls 10 and 11 (speed_vs_n at n 32768 and 65536, b 1,
# d 128 and 64, with PyTorch's FA2 and cuDNN), then whatever call 1's budget cut (its steps resume on the
# warm machine; on a cold one they run again). From the repository root, .carry/gpu carried.
set -uo pipefail
t_end=$((SECONDS + ${BUDGET:-560}))
left() { echo $((t_end - SECONDS > 5 ? t_end - SECONDS : 5)); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
date -u +%FT%TZ
SEQLENS="" HEAD_DIMS="128 64" FWD_FAMILIES="fa1 fa2_sm80 fa3_sm90" BWD_FAMILIES="" \
  timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n
HEAD_DIMS=64 FWD_FAMILIES="" BWD_FAMILIES="fa2_sm80_bwd fa1_bwd" LONG_SEQLENS="" PEERS="" \
  timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n
SHAPES="" timeout -k 5 "$(left)" bash scripts/gpu.sh experiment decode
date -u +%FT%TZ
