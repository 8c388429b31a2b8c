#!/usr/bin/env bash
# Builds FlashLab for the GPU machine and lays out what a device run carries.
#
# The GPU machine (Ubuntu 24.04, glibc 2.39, CUDA 13.0 at /usr/local/cuda) has no Boost libraries and no
# SQLite, so libstdc++, Boost.Program_options and SQLite are linked statically (-DFA_PORTABLE=ON); NVRTC
# stays dynamic (found there through LD_LIBRARY_PATH=/usr/local/cuda/lib64) and libcuda is dlopen'ed.
# Output: .carry/gpu/{bin,kernels_src,scripts} — stripped binaries (tools and test binaries), the kernel
# sources NVRTC compiles at run time, and the device-side scripts. .carry/ is git-ignored; a device call
# names it in `carry` (64 MiB at most, checked below).
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build-portable
carry_dir=.carry/gpu
carry_limit_mib=60

cmake -S . -B "$build_dir" -G Ninja -DFA_PORTABLE=ON -DCMAKE_BUILD_TYPE=Release -DFA_BUILD_TESTS=ON >/dev/null
cmake --build "$build_dir" -j"$(nproc)"

rm -rf "$carry_dir"
mkdir -p "$carry_dir/bin"
for exe in "$build_dir"/bin/*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  strip -o "$carry_dir/bin/$(basename "$exe")" "$exe"
done
cp -r kernels_src "$carry_dir/kernels_src"
cp scripts/device-*.sh "$carry_dir/" 2>/dev/null || true
[ -d experiments/peers ] && cp -r experiments/peers "$carry_dir/peers"
[ -d experiments/fa3_sm90 ] && cp -r experiments/fa3_sm90 "$carry_dir/fa3_sm90"
# Device-side experiment scripts keep their folder name (each finds bin/ one level up).
mkdir -p "$carry_dir/kernels" && cp experiments/kernels/traffic_h200.sh "$carry_dir/kernels/"
[ -f experiments/tuner/run_h200.sh ] && mkdir -p "$carry_dir/tuner" && cp experiments/tuner/*.sh experiments/tuner/*.py "$carry_dir/tuner/"

size_mib=$(du -sm "$carry_dir" | cut -f1)
echo "build-portable: $carry_dir holds ${size_mib} MiB ($(ls "$carry_dir/bin" | wc -l) binaries)"
if [ "$size_mib" -gt "$carry_limit_mib" ]; then
  echo "build-portable: $carry_dir is over ${carry_limit_mib} MiB; a device call carries 64 MiB at most" >&2
  exit 1
fi
