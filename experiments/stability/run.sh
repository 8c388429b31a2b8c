#!/usr/bin/env bash
# stability (Golden et al. 2024, "Is Flash Attention Stable?"): deviation from a float64 reference of the
# tiled FlashAttention forward against standard attention in the same precision, against n and kBlockN.
#   CPU part (no GPU; here it ran on the build machine): fa-stability-report (numerics/stability_study),
#     the CPU emulator in the kernels' arithmetic, bf16 and fp16, normal and fa3_outliers, d = 64.
#   GPU part: our fa2_sm80 (each kBlockN of its space), fa1 and naive (standard attention, S and P through
#     memory) on the same inputs and rows (fa-bench --stability-study), and PyTorch's bf16/fp16
#     FlashAttention-2, cuDNN and math backends against float64 on the GPU (stability_gpu.py).
#     ~5 min in all:   bash scripts/gpu.sh experiment stability
#                      (or CARRY=.carry/gpu bash experiments/stability/run.sh)
# Environment: SKIP_CPU=1 (the GPU part only), SKIP_GPU=1 (the CPU part only).
set -uo pipefail
FL_COMMAND="$0${SKIP_CPU:+ SKIP_CPU=$SKIP_CPU}${SKIP_GPU:+ SKIP_GPU=$SKIP_GPU}"
source "$(dirname "$0")/../lib.sh"
fl_init stability
[ "${SKIP_CPU:-0}" = 1 ] || fl_step cpu 900 "$fl_bin/fa-stability-report" --out "$fl_work"
if [ "${SKIP_GPU:-0}" != 1 ]; then
  for fam in fa2_sm80 fa1 naive; do
    fl_step "gpu_$fam" 300 "$fl_bin/fa-bench" --family "$fam" --dtype bf16,fp16 \
      --stability-study "gpu_$fam.csv"
  done
  fl_step gpu 300 python3 "$fl_here/stability_gpu.py" --out gpu.csv
fi
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log"
fl_sync
fl_plot
