#!/bin/sh
# Reproduces this folder's table and JSON: fa-mutate on the CPU target, both loop orders, bf16 and e4m3.
# Run from the repository root after building (cmake --build build).
set -e
./build/bin/fa-mutate --target cpu --json experiments/mutation/fa_mutate_cpu.json | tee experiments/mutation/fa_mutate_cpu.txt
