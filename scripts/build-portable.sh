#!/usr/bin/env bash
# Builds FlashLab for the GPU machine and lays out what a device run carries.
#
# The GPU machine (Ubuntu 24.04, glibc 2.39, CUDA 13.0 at /usr/local/cuda) has no Boost libraries and no
# SQLite, so libstdc++, Boost.Program_options and SQLite are linked statically (-DFA_PORTABLE=ON); NVRTC
# stays dynamic (found there through LD_LIBRARY_PATH=/usr/local/cuda/lib64) and libcuda is dlopen'ed.
# Output: .carry/gpu/{bin,kernels_src} — stripped binaries (tools and test binaries) and the kernel sources
# NVRTC compiles at run time, as they were when the binaries were built — and .carry/grid, its slice for
# the grid recipe (CARRY=$PWD/.carry/grid bash scripts/gpu.sh grid, carrying .carry/grid and .carry/tune).
# .carry/ is git-ignored; a device call names it in `carry` (64 MiB at most, checked below) and runs
# scripts/gpu.sh from the repository root of its copy of the tree (the scripts and experiments come with
# the tree, not the carry).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-portable
carry_dir=.carry/gpu
carry_limit_mib=60

cmake -S . -B "$build_dir" -G Ninja -DFA_PORTABLE=ON -DCMAKE_BUILD_TYPE=Release -DFA_BUILD_TESTS=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"

rm -rf "$carry_dir"
mkdir -p "$carry_dir/bin"
# Test suites with no [gpu] case and no NVRTC run on the device stay here (CI runs them): 14 MB that the
# 64 MiB a device call carries, the tree included, cannot spare.
cpu_only_suites=" test_common test_db test_fuzz test_numerics "
for exe in "$build_dir"/bin/*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  [[ $cpu_only_suites == *" $(basename "$exe") "* ]] && continue
  strip -o "$carry_dir/bin/$(basename "$exe")" "$exe"
done
cp -r kernels_src "$carry_dir/kernels_src"

# The grid's carry (scripts/gpu/grid.sh): the tuner's three binaries and the kernel sources, 11 MiB, so that
# the tree, the tuning database (.carry/tune) and it stay under 64 MiB where .carry/gpu with them does not.
grid_dir=.carry/grid
rm -rf "$grid_dir"
mkdir -p "$grid_dir/bin"
cp "$carry_dir"/bin/{fa-bench,fa-tune,fa-compile-worker} "$grid_dir/bin/"
cp -r kernels_src "$grid_dir/kernels_src"

size_mib=$(du -sm "$carry_dir" | cut -f1)
echo "build-portable: $carry_dir holds ${size_mib} MiB ($(ls "$carry_dir/bin" | wc -l) binaries);" \
  "device call: carry .carry/gpu, run bash scripts/gpu.sh RECIPE (tests, sanitizers, mutants, ...)"
if [ "$size_mib" -gt "$carry_limit_mib" ]; then
  echo "build-portable: $carry_dir is over ${carry_limit_mib} MiB; a device call carries 64 MiB at most" >&2
  exit 1
fi
