# Recipe `peers` (sourced by scripts/gpu.sh): experiments/peers/run.sh, ours beside PyTorch's
# FlashAttention-2 and cuDNN backends in one run, the dated table in $OUT/peers/table.md. Its environment
# (DTYPES, HEAD_DIMS, SEQLENS, DIRECTIONS, FWD_FAMILY, BWD_FAMILY, FWD_CONFIG, BWD_CONFIG) passes through.
gpu_line
bash experiments/peers/run.sh
