#!/usr/bin/env bash
# mutation: fa-mutate on the CPU target (both loop orders, bf16 and e4m3): the table and JSON of this folder
# (fa_mutate_cpu.txt, fa_mutate_cpu.json). No GPU needed: run it here or in a device call.
#   bash experiments/mutation/run.sh      (or bash scripts/gpu.sh experiment mutation, from the carry)
# The GPU target is the recipe `bash scripts/gpu.sh mutants`.
set -uo pipefail
FL_COMMAND="$0"
source "$(dirname "$0")/../lib.sh"
fl_init mutation
fl_step cpu 900 "$fl_bin/fa-mutate" --target cpu --json fa_mutate_cpu.json
cp "$fl_work/cpu.log" "$fl_work/fa_mutate_cpu.txt"
fl_sync
