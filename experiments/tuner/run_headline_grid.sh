#!/usr/bin/env bash
# The headline grid (issue 14 item 4), resumable: every family that can run each problem (fa-tune picks them
# from the registry) x {bf16, fp16} x d {64, 128, 256} x {full, causal} x n {1024..16384} x {fwd, bwd}, and
# FP8 (e4m3) forward. One SQLite file holds everything: carry it to the GPU machine and back (GRID_DB), and a
# rerun measures only what is missing (finished candidates are answered from it), so the grid is tuned over
# as many device calls as it takes. Each call stops cleanly at its --time-limit (split over its problems).
#
# Strategy: bayes with --warm-start (the best of neighbouring n first). Budget per problem: BUDGET (default
# 12: the default, the warm starts, then proposals); on the recorded fixture random and anneal reach 95% of
# the optimum within 30% of the space (tests/tuner/strategy/recorded_fixture_test.cpp): compare with A1's
# exhaustive run before shipping, and state the gap.
#   GRID_DB=/path/grid.sqlite SLICE=bf16 TIME=540 bash experiments/tuner/run_headline_grid.sh
# SLICE picks one dtype (bf16, fp16, fp8) per call; DIRECTION fwd or bwd. After the grid:
#   bin/fa-tune --arch sm90 --db $GRID_DB --export-best db/seed/best_configs.tsv   (then commit, with the run log)
set -u
script_dir=$(cd "$(dirname "$0")" && pwd)
here=${CARRY:-$script_dir}
[ -x "$here/bin/fa-tune" ] || here=$(cd "$script_dir/../.." && pwd)/.carry/gpu
out=${OUT:-/tmp/flashlab-out}
db=${GRID_DB:-$here/grid.sqlite}
slice=${SLICE:-bf16}
direction=${DIRECTION:-fwd}
budget_each=${BUDGET:-12}
time_limit=${TIME:-540}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache
cd "$here"
seqlens=1024,2048,4096,8192,16384
case $slice in
  fp8) dtype=fp8_e4m3; direction=fwd ;;
  bf16|fp16) dtype=$slice ;;
  *) echo "SLICE '$slice' is not one of: bf16, fp16, fp8" >&2; exit 2 ;;
esac
# 3 head dims x 2 masks x 5 n = 30 shapes per call; --budget is a total over the (family, shape) problems.
problems=$(( 3 * 2 * 5 * 3 ))  # at most 3 families per shape
tag="${slice}_${direction}_$(date -u +%Y%m%dT%H%M%S)"
bin/fa-tune --arch sm90 --dtype "$dtype" --head-dim 64,128,256 --causal both --seqlen $seqlens \
  --direction "$direction" --strategy bayes --warm-start --budget $(( budget_each * problems )) \
  --time-limit "$time_limit" --db "$db" --json "$out/grid_$tag.json" --report "$out/grid_$tag" \
  >"$out/grid_$tag.txt" 2>"$out/grid_$tag.err"
echo "grid $tag rc=$? (0 done, 130/143 stopped: rerun resumes)" | tee -a "$out/grid.log"
