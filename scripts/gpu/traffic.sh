# Recipe `traffic` (sourced by scripts/gpu.sh): experiments/kernels/traffic_h200.sh, the DRAM bytes (ncu) and
# device memory of one forward of naive, fa1, fa2_sm80 (bf16, d 128, headline shapes, n 1024..16384), into
# $OUT/traffic/traffic.csv. FAMILIES, SEQLENS, NCU_TIMEOUT pass through.
gpu_line
bash experiments/kernels/traffic_h200.sh
