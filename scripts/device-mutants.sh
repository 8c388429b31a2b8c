#!/usr/bin/env bash
# Runs on the GPU machine, from the carried folder (.carry/gpu, made by scripts/build-portable.sh):
# fa-mutate --target gpu on fa2_sm80 and then fa1, each in bf16 and fp16, the whole catalogue (forward
# mutants on the forward kernel, backward ones on <family>_bwd where it is registered) over every input
# family. Leaves under $OUT, per family: the printed table (mutants_gpu_<family>.txt), the JSON report
# (.json), the SQLite rows (target 'gpu', one database for both), and mutants_dump.tgz: every killing input
# and every false positive as .npy files with case.json and fa-check.sh (replay offline with
# FA_CHECK=build/bin/fa-check sh <case>/fa-check.sh). One call stays under 4 minutes: each family runs under
# a time limit (fa2_sm80 first, it matters most), and a family cut short still leaves its printed output
# and its dump.
#   device call: cd .carry/gpu && bash device-mutants.sh [extra fa-mutate options]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR="$here/kernels_src"
# The compile cache stays on the device machine (it is not worth carrying back): a second call in the
# same lease compiles nothing.
cache_dir=/tmp/flashlab-cache
mkdir -p "$cache_dir"
dump="$out/mutants_dump"
total_budget_s=300  # three families; fa2_sm80 and fa1 took 42 s and 38 s on the H200 (2026-11-29)
fa2_budget_s=140    # fa2_sm80 bf16+fp16 cold took ~7 s per dtype forward-only on 2026-11-29; the backward adds

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
start=$(date +%s)
final_rc=0
for run in fa2_sm80:bf16,fp16 fa1:bf16,fp16 fa2_fp8:fp8_e4m3; do
  family=${run%%:*} dtypes=${run##*:}
  elapsed=$(($(date +%s) - start))
  budget=$((total_budget_s - elapsed))
  if [ "$family" = fa2_sm80 ] && [ "$budget" -gt "$fa2_budget_s" ]; then budget=$fa2_budget_s; fi
  if [ "$budget" -le 10 ]; then
    echo "device-mutants: $family not run: the time budget is spent" | tee "$out/mutants_gpu_$family.txt"
    final_rc=1
    continue
  fi
  timeout --signal=TERM "$budget" "$here/bin/fa-mutate" --target gpu --family "$family" --dtype "$dtypes" \
    --json "$out/mutants_gpu_$family.json" --db "$out/mutants_gpu.sqlite" \
    --compile-db "$cache_dir/compile.sqlite" --dump-dir "$dump" "$@" 2>&1 | tee "$out/mutants_gpu_$family.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] && echo "device-mutants: $family cut short after ${budget} s" | tee -a "$out/mutants_gpu_$family.txt"
  echo "device-mutants: $family exit $rc at $(($(date +%s) - start)) s (0 all killed and named," \
    "1 survivor/misnamed/false positive or a GPU failure, 2 bad input, 3 no GPU, 124 time limit)"
  [ "$rc" -ne 0 ] && final_rc=$rc
done
if [ -d "$dump" ]; then
  tar czf "$out/mutants_dump.tgz" -C "$out" mutants_dump && rm -rf "$dump"
  echo "device-mutants: $(du -h "$out/mutants_dump.tgz" | cut -f1) of killing inputs in mutants_dump.tgz"
fi
exit "$final_rc"
