# Recipe `traffic` (sourced by scripts/gpu.sh): the io_traffic question (experiments/io_traffic/run.sh): ncu
# DRAM bytes and device memory of one forward per family and n (bf16, d 128, headline shapes), this GPU's
# ceilings and the timed forwards for the roofline, resumable, into $OUT/io_traffic.tgz beside
# $OUT/io_traffic.summary.txt. FAMILIES, SEQLENS, NCU_TIMEOUT pass through.
gpu_line
bash experiments/io_traffic/run.sh
