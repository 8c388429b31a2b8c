# Session 7 (2026-12-02), call 1: main cb0f76e on the H200 before anything is timed: every [gpu] test case
# (after kparts300's PTX-identical kernels_src split, split300's host splits and be81ed5's dtype-tagged host
# tensors, none run on the GPU yet), and beside it (nothing here times) compute-sanitizer memcheck and
# racecheck on the Hopper families' defaults (fa3_sm90 forward not sanitized since the kernel-parts
# refactor; flash_decode; fa3_sm90_bwd).
BUDGET=${BUDGET:-560}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s7call1 start"
( OUT=$L/gpu_tests TESTS_PARALLEL=10 TESTS_CPU=0 TESTS_BUDGET_S=470 bash scripts/gpu.sh tests > "$L/tests.txt" 2>&1
  C=$L/gpu_tests/tests/cases.txt; [ -f "$C" ] || { mkdir -p "$L/t"; tar xzf "$L/gpu_tests/tests.tgz" -C "$L/t" 2>/dev/null; C=$(ls "$L"/t/*/cases.txt 2>/dev/null | head -1); }
  log "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l < "$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')" ) &
( sleep 5; OUT=$L/san FAMILIES_FWD="fa3_sm90 flash_decode" FAMILIES_BWD="fa3_sm90_bwd" SANITIZER_TIMEOUT=150 SANITIZER_TIMEOUT_BWD=150 \
    timeout 470 bash scripts/gpu.sh sanitizers > "$L/sanitizers.txt" 2>&1
  log "sanitizers rc=$? $(grep -h 'rc=' "$L/sanitizers.txt" | cut -c1-110 | tr '\n' '|')" ) &
wait
finish
cat /tmp/s-done/summary.txt
