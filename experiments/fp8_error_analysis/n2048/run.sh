#!/usr/bin/env bash
# Builds study.cpp against the numerics library of a build tree and runs it (emulated, CPU only).
#   experiments/fp8_error_analysis/n2048/run.sh BUILD_DIR FIRST_SEED LAST_SEED N[,N...] [terms] > FILE.csv
# BUILD_DIR: a build tree with fl_numerics built (cmake --build build --target fl_numerics). "terms": the
# error terms (Q or K in bf16) and the candidate Q/K quantisations at n = 2048.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$1
shift
bin=$(mktemp -d)/fp8_n2048_study
cuda=${CUDA_HOME:-/usr/local/cuda}
g++ -std=c++20 -O2 -I "$root" -isystem "$cuda/include" "$here/study.cpp" -o "$bin" \
  "$build/numerics/libfl_numerics.a" "$build/common/libfl_common.a" -lpthread
"$bin" "$@"
