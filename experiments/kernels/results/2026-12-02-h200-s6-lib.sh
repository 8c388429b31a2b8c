# Session helpers for hand-written device calls (sourced; not committed: the call scripts are copied into
# experiments/*/results when their results are). BUDGET: seconds this call may use.
export CARRY=${CARRY:-$PWD/.carry/gpu}
export OUT=${OUT:-/tmp/flashlab-out}
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR=$CARRY/kernels_src XDG_CACHE_HOME=/tmp/flashlab-cache PYTHONUNBUFFERED=1
export FA_BENCH_CHECK_LOG=/tmp/flashlab-experiments/fa-bench-checks.tsv
mkdir -p /tmp/flashlab-experiments
B=$CARRY/bin
L=$OUT/s; mkdir -p "$L"
BUDGET=${BUDGET:-560}
left() { echo $(( BUDGET - SECONDS )); }
cap() { local l=$(( $(left) - 8 )); [ "$1" -lt "$l" ] && echo "$1" || echo $(( l > 1 ? l : 1 )); }
log() { echo "[$(date -u +%H:%M:%S) +${SECONDS}s] $*" | tee -a "$L/summary.txt"; }
# bench NAME LIMIT fa-bench-args...: one fa-bench run, its table as CSV, one summary line.
bench() {
  local n=$1 lim=$2; shift 2
  timeout --kill-after=5 "$(cap "$lim")" "$B/fa-bench" "$@" --csv "$L/$n.csv" > "$L/$n.txt" 2>&1
  local rc=$?
  log "$n rc=$rc $(grep -c 'TFLOP/s' "$L/$n.txt") timed; $(grep 'TFLOP/s' "$L/$n.txt" | cut -c1-150 | tr '\n' '|')"
}
snap() { tar czf "$OUT/session.tgz" -C "$L" . 2>/dev/null; cp "$L/summary.txt" "$OUT/summary.txt" 2>/dev/null; }
# finish: the last line, the tarball; the log folder leaves $OUT (the device returns at most 8 files from it).
finish() { log "end, ${SECONDS}s"; snap; rm -rf /tmp/s-done; mv "$L" /tmp/s-done; }
