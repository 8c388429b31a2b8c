#!/usr/bin/env bash
# Installs FlashLab's build and test dependencies from Debian's packages.
# Idempotent: a package already present is not reinstalled, and apt-get runs only when something is missing.
# The CUDA 13 toolkit (NVRTC and the driver API headers) is not a Debian package: it must already be at
# $CUDA_HOME or /usr/local/cuda; this script checks for it and says so in one line when it is absent.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-program-options-dev libboost-dev   # Program_options; Multiprecision is header-only
  libsqlite3-dev sqlite3
  catch2                                       # Catch2 2.13, single header
  gnuplot-nox                                  # plots in fa-check reports
  clang-format
  python3-numpy                                # the independent diagnosis corpus (tests/numerics/diagnosis)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" \
    >/dev/null
else
  echo "setup: all Debian packages present"
fi

cuda_home="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$cuda_home/include/nvrtc.h" ] || [ ! -f "$cuda_home/include/cuda.h" ]; then
  echo "setup: CUDA toolkit not found at $cuda_home (need NVRTC and cuda.h from CUDA 13); set CUDA_HOME" >&2
  exit 2
fi
echo "setup: CUDA toolkit at $cuda_home ($("$cuda_home/bin/nvcc" --version 2>/dev/null |
  grep -o 'release [0-9.]*' || echo 'nvcc absent'))"
