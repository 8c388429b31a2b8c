#!/usr/bin/env bash
# Second device call of 2026-11-29: the [gpu] tests (all families, fa2_sm80 layouts, mutants), fa1 and a
# few fa2_sm80 d128 variants. Usage (from .carry/kernels): ./run_h200_final.sh OUT_DIR
set -u
out=${1:?output folder}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR=$PWD/kernels_src
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/gpu.txt"
./test_kernels_src "[gpu]" > "$out/gpu_tests.txt" 2>&1
./fa-bench --family fa1 --head-dim 64,128 --seqlen 1024,4096,16384 --runs 20 --csv "$out/bench_fa1.csv" > "$out/bench_fa1.txt" 2>&1
for c in kStages=2 kStages=3 kBlockN=64 kBlockM=64,kBlockN=64,kStages=2; do
  ./fa-bench --head-dim 128 --seqlen 4096 --causal no --config $c >> "$out/bench_fa2_d128_variants.txt" 2>&1
done
tail -4 "$out/gpu_tests.txt"
grep -h "TFLOP\|FAIL\|regs" "$out"/bench_*.txt | sed 's/  */ /g' | cut -c1-120
