#!/usr/bin/env bash
# Runs on the GPU machine, from the carried folder (.carry/gpu, made by scripts/build-portable.sh):
# fa-mutate --target gpu on fa2_sm80 in bf16, the whole catalogue over every input family. Prints the table;
# leaves under $OUT the JSON report, the SQLite rows of the run (target 'gpu') and the printed output.
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

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
start=$(date +%s)
"$here/bin/fa-mutate" --target gpu --family fa2_sm80 --dtype bf16 \
  --json "$out/mutants_gpu.json" --db "$out/mutants_gpu.sqlite" --compile-db "$cache_dir/compile.sqlite" \
  "$@" 2>&1 | tee "$out/mutants_gpu.txt"
rc=${PIPESTATUS[0]}
echo "device-mutants: fa-mutate exit $rc after $(($(date +%s) - start)) s (0 all killed and named," \
  "1 survivor/misnamed/false positive or a GPU failure, 2 bad input, 3 no GPU)"
exit "$rc"
