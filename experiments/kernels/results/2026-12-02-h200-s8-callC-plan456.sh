# Session 8 (2026-12-02), call C: issue 17's PLAN calls 4-6 in one device call, each question resumable:
# stability's GPU part, decode (GQA 4 with the split sweep), io_traffic (ncu DRAM bytes and the roofline).
BUDGET=${BUDGET:-570}
start=$SECONDS
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader
run_q() {  # QUESTION LIMIT ENV...: one experiment under the time left
  local q=$1 lim=$2; shift 2
  local left=$(( BUDGET - (SECONDS - start) - 10 )); [ "$lim" -gt "$left" ] && lim=$left
  [ "$lim" -lt 20 ] && { echo "[$q] not started: ${left}s left"; return; }
  local t0=$SECONDS
  env "$@" timeout --kill-after=10 "$lim" bash scripts/gpu.sh experiment "$q" > "/tmp/callC_$q.txt" 2>&1
  echo "[$q] rc=$? in $((SECONDS - t0)) s (limit $lim)"; tail -n 25 "/tmp/callC_$q.txt"
}
run_q stability 200 SKIP_CPU=1
run_q decode 200 SHAPES=1:32:8
run_q io_traffic 400
tar czf "$OUT/callC_console.tgz" /tmp/callC_*.txt 2>/dev/null
ls -la "$OUT"
