#!/usr/bin/env bash
# The device call this work still needs (not yet run: the 2026-11-29 session's device time ran out).
# Carry: fa-bench, test_kernels_src (portable build), kernels_src/, peers.py and this script in
# .carry/kernels; run from there: ./run_h200_next.sh /tmp/res; then tar /tmp/res into $OUT.
#   1. every [gpu] test: all families' defaults over numerics' input families, fa2_sm80 layouts, forward
#      and backward mutants caught, backward determinism;
#   2. compute-sanitizer memcheck and racecheck on one small config per family (fa-bench --check-only);
#   3. fa2_sm80_bwd timed over the headline shapes, with PyTorch's backward peers in the same run;
#   4. ncu DRAM bytes for naive, fa1, fa2_sm80 at n = 1024..16384 (d = 128, bf16, non-causal).
set -u
out=${1:?output folder}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR=$PWD/kernels_src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv > "$out/gpu.txt"
timeout 240 ./test_kernels_src "[gpu]" > "$out/gpu_tests.txt" 2>&1
for fam in naive fa1 fa2_sm80; do
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 ./fa-bench --family $fam --head-dim 64 \
      --seqlen 512 --causal yes --check-only > "$out/sanitizer_${fam}_${tool}.txt" 2>&1; echo "$fam $tool rc=$?" >> "$out/sanitizer.txt"
  done
done
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 ./fa-bench --family fa2_sm80_bwd --direction bwd \
  --head-dim 64 --seqlen 512 --causal yes --check-only > "$out/sanitizer_bwd_racecheck.txt" 2>&1; echo "bwd racecheck rc=$?" >> "$out/sanitizer.txt"
./fa-bench --family fa2_sm80_bwd --direction bwd --head-dim 64,128 --csv "$out/bench_bwd.csv" > "$out/bench_bwd.txt" 2>&1
python3 peers.py --bwd --out "$out/peers_bwd.csv" --dtype bf16 --head-dim 64,128 > "$out/peers_bwd.txt" 2>&1
for fam in naive fa1 fa2_sm80; do
  for n in 1024 4096 16384; do
    timeout 120 ncu --clock-control none --metrics dram__bytes_read.sum,dram__bytes_write.sum --csv \
      ./fa-bench --family $fam --head-dim 128 --seqlen $n --causal no --check-only >> "$out/ncu_dram.csv" 2>&1
  done
done
grep -h "test cases\|assertions" "$out/gpu_tests.txt"; cat "$out/sanitizer.txt"
grep -h "TFLOP\|FAIL" "$out"/bench_bwd.txt | sed 's/  */ /g' | cut -c1-120
