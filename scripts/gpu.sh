#!/usr/bin/env bash
# The one way to run FlashLab on the GPU machine. Build the carry here with scripts/build-portable.sh
# (.carry/gpu/{bin,kernels_src}); the device call then runs, from the repository root of its copy:
#
#   bash scripts/gpu.sh RECIPE [RECIPE ...]        e.g.  bash scripts/gpu.sh tests sanitizers
#   bash scripts/gpu.sh experiment QUESTION [ARGS]  runs experiments/QUESTION/run.sh
#
# Recipes (scripts/gpu/<recipe>.sh, each with its own time limits, all within one 10-minute device call):
#   tests       every [gpu] test case, each its own process, 4 at a time under one 480 s budget
#               (TESTS_PARALLEL, TESTS_BUDGET_S, TESTS_ONLY: a regex over "binary<TAB>case"), then the CPU
#               tests of runtime and tuner, which use NVRTC there; TESTS_CPU=0 skips the CPU runs
#   sanitizers  compute-sanitizer memcheck + racecheck on one small config of every family, forward and
#               backward (FAMILIES_FWD, FAMILIES_BWD)
#   mutants     fa-mutate --target gpu: fa2_sm80, fa1 (bf16, fp16), fa2_fp8 (e4m3), with the killing inputs
#   bwd         the backward: [gpu] backward tests, checks, both dQ modes timed beside PyTorch's backward
#   fp8         fa2_fp8: SASS of one FP8 mma, [fp8] tests, checks per scaling, timing beside bf16, error study
#   peers       our defaults beside PyTorch's FlashAttention-2 and cuDNN backends, one run, one table
#   traffic     the io_traffic question: ncu DRAM bytes and device memory of one forward per family and n,
#               the roofline's ceilings and timed forwards (experiments/io_traffic/run.sh)
#   tuning      fa-tune on fa2_sm80 (d 64 and 128, causal and not), a rerun from the database, the best
#               configs exported
#   fixture     the exhaustive fa-tune record that tests/tuner/strategy/recorded_fixture_test.cpp reads
#   pace        fa-tune's whole fa2_sm80 d128 space cold with --pace baseline, then fast, then fast warm
#               (issue 14 item 6: candidates/s before and after in one call)
#   multigpu    one grid tuned on --gpus 0 and on --gpus all (issue 18: wall times, speed-up, winners)
#   grid        the headline grid in resumable pieces (GRID_LIST, GRID_BUDGET_S; carry .carry/tune too):
#               the database and the winners come back (experiments/tuner/README.md, "how to run")
#
# One environment for all (below). Each recipe writes under $OUT/<recipe>/ and prints a summary, also kept
# as $OUT/<recipe>/summary.txt. The device tool returns at most 8 files from $OUT: when there are more, each
# recipe's folder is packed into $OUT/<recipe>.tgz and only its summary stays beside it.
#
# An experiment's run.sh gets the same environment: CARRY (bin/ and kernels_src/ of the carry), OUT,
# FA_KERNELS_DIR, LD_LIBRARY_PATH, XDG_CACHE_HOME; experiments/lib.sh packs its results into
# $OUT/<question>.tgz beside $OUT/<question>.summary.txt.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
export CARRY=${CARRY:-$repo/.carry/gpu}
export OUT=${OUT:-/tmp/flashlab-out}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR="$CARRY/kernels_src"
export XDG_CACHE_HOME=/tmp/flashlab-cache  # compile cache: kept on the device machine between calls
mkdir -p "$XDG_CACHE_HOME"  # made here: fa-mutate refuses a --compile-db in a folder that does not exist
export PYTHONUNBUFFERED=1
bin="$CARRY/bin"
recipes="$repo/scripts/gpu"
# Test binaries find their data by the absolute source path they were built in (FA_SOURCE_DIR); the device
# has a copy of the checkout elsewhere, so that path points at the copy when it is absent.
built_in=${FA_BUILT_IN:-/work/main}
if [ ! -e "$built_in" ]; then mkdir -p "$(dirname "$built_in")" && ln -s "$repo" "$built_in"; fi

usage() {
  sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  echo "recipes here: $(cd "$recipes" && ls *.sh | sed 's/\.sh$//' | tr '\n' ' ')"
}

[ $# -ge 1 ] || { usage >&2; exit 2; }
[ -x "$bin/fa-bench" ] ||
  { echo "gpu.sh: no binaries in $bin: run scripts/build-portable.sh and carry .carry/gpu" >&2; exit 2; }
mkdir -p "$OUT"

# note TEXT: one line of the current recipe's summary (stdout and $dir/summary.txt).
note() { echo "$*" | tee -a "$dir/summary.txt"; }
# gpu_line: which GPU, driver, clocks and temperature, into the summary; gpu_name: the first GPU's name.
gpu_line() {
  local line query=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu
  line=$(nvidia-smi --query-gpu="$query" --format=csv,noheader 2>&1)
  echo "$line" | tee -a "$dir/summary.txt"
  gpu_name=$(echo "$line" | head -n 1 | cut -d, -f1)
  date -u +%FT%TZ >>"$dir/summary.txt"
}
# last_line FILE: the last non-empty line of a log (Catch2's compact reporter ends with its totals).
last_line() { grep -v '^$' "$1" 2>/dev/null | tail -n 1; }

run_one() {  # RECIPE [ARGS]: sourced, so it sees bin, dir, note, gpu_line
  local name=$1
  shift
  dir="$OUT/$name"
  mkdir -p "$dir"
  : >"$dir/summary.txt"
  echo "=== $name"
  # shellcheck source=/dev/null
  (cd "$repo" && source "$recipes/$name.sh" "$@")
  return $?
}

pack() {  # more than 8 files under $OUT: one tarball per folder, its summary beside it
  [ "$(find "$OUT" -type f | wc -l)" -le 8 ] && return
  for d in "$OUT"/*/; do
    [ -d "$d" ] || continue
    local name
    name=$(basename "$d")
    [ -f "$d/summary.txt" ] && cp "$d/summary.txt" "$OUT/$name.summary.txt"
    tar czf "$OUT/$name.tgz" -C "$OUT" "$name" && rm -rf "$d"
  done
  echo "gpu.sh: $OUT packed: $(cd "$OUT" && ls | tr '\n' ' ')"
}

status=0
if [ "$1" = experiment ]; then
  question=${2:?experiment QUESTION}
  shift 2
  script="$repo/experiments/$question/run.sh"
  [ -f "$script" ] || { echo "gpu.sh: no experiments/$question/run.sh" >&2; exit 2; }
  (cd "$repo" && bash "$script" "$@")
  status=$?
else
  for name in "$@"; do
    if [ ! -f "$recipes/$name.sh" ]; then
      echo "gpu.sh: unknown recipe '$name'; one of: $(cd "$recipes" && ls *.sh | sed 's/\.sh$//' |
        tr '\n' ' ')" >&2
      exit 2
    fi
  done
  for name in "$@"; do
    run_one "$name"
    rc=$?
    echo "gpu.sh: $name exit $rc"
    [ $rc -eq 0 ] || status=$rc
  done
fi
pack
exit $status
