#!/usr/bin/env bash
# Everything one device call runs (the device tool sends /work/main plus .carry/kernels): the [gpu] tests of
# kernels_src, fa-bench over the headline shapes, and the PyTorch peers by the same protocol.
# Usage (on the GPU machine, from .carry/kernels): ./run_h200.sh "$OUT"
set -u
out=${1:?output folder}; mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR=$PWD/kernels_src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv | tee "$out/gpu.txt"
./test_kernels_src "[gpu]" 2>&1 | tail -25 > "$out/gpu_tests.txt"
./fa-bench --dtype bf16 --head-dim 64,128 --csv "$out/bench_bf16.csv" > "$out/bench_bf16.txt" 2>&1
./fa-bench --dtype fp16 --head-dim 64,128 --seqlen 1024,4096,16384 --csv "$out/bench_fp16.csv" > "$out/bench_fp16.txt" 2>&1
./fa-bench --dtype bf16 --head-dim 256 --seqlen 1024,4096,16384 --csv "$out/bench_d256.csv" > "$out/bench_d256.txt" 2>&1
./fa-bench --family naive --head-dim 128 --seqlen 1024,4096,16384 --causal no --runs 20 --csv "$out/bench_naive.csv" > "$out/bench_naive.txt" 2>&1
python3 peers.py --out "$out/peers.csv" --dtype bf16 --head-dim 64,128 > "$out/peers.txt" 2>&1
python3 peers.py --out "$out/peers_fp16.csv" --dtype fp16 --head-dim 64,128 --seqlen 1024,4096,16384 >> "$out/peers.txt" 2>&1
tail -3 "$out/gpu_tests.txt"
grep -h "TFLOP\|FAIL\|passed" "$out"/bench_*.txt | sed 's/  */ /g' | cut -c1-110
grep -c fwd "$out/peers.txt"
