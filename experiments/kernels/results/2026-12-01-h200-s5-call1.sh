# Session 5, call 1: correctness only (nothing timed): every [gpu] test case of every binary (main as it is:
# fa3_sm90/_bwd after the shared-part refactor, kparts' sm80 families, fp8's device quantisation), and
# compute-sanitizer on the backward defaults at d64/d256 (the per-thread slot release) and d128 (bulk dQ).
BUDGET=${BUDGET:-550}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s5call1 start"
san() { # san NAME TOOL LIMIT fa-bench-args...
  local n=$1 tool=$2 lim=$3; shift 3
  timeout "$(cap "$lim")" compute-sanitizer --tool "$tool" --error-exitcode 9 "$B/fa-bench" "$@" --check-only > "$L/san_$n.txt" 2>&1
  log "sanitizer $n rc=$? $(grep -E 'SUMMARY' "$L/san_$n.txt" | tail -n 1)"
}
( sleep 2; F="--family fa3_sm90_bwd --direction bwd --dtype bf16 --batch 1 --heads 2 --seqlen 300 --causal yes"
  san bwd_d64_racecheck racecheck 150 $F --head-dim 64
  san bwd_d256_racecheck racecheck 150 $F --head-dim 256
  san bwd_d128_racecheck_bulk racecheck 150 $F --head-dim 128
  san bwd_d128_full_memcheck_bulk memcheck 100 --family fa3_sm90_bwd --direction bwd --dtype bf16 --batch 1 --heads 2 --seqlen 300 --causal no --head-dim 128 ) &
# Two runners at once: the long fa3_sm90 forward cases start at once instead of last.
OUT_SAVE=$OUT
( export OUT=$L/gpu_fa3; TESTS_ONLY=$'\tfa3_sm90 ' TESTS_PARALLEL=5 TESTS_CPU=0 TESTS_BUDGET_S=$(( $(left) - 30 )) bash scripts/gpu.sh tests > "$L/tests_fa3.txt" 2>&1; log "tests fa3 rc=$? $(grep -c '^rc=0' "$L/gpu_fa3/tests/cases.txt") passed of $(wc -l < "$L/gpu_fa3/tests/cases.txt")" ) &
( export OUT=$L/gpu_rest; TESTS_ONLY=$'\t([^f]|f[^a]|fa[^3]|fa3[^_]|fa3_sm90[^ ])' TESTS_PARALLEL=5 TESTS_CPU=1 TESTS_BUDGET_S=$(( $(left) - 30 )) bash scripts/gpu.sh tests > "$L/tests_rest.txt" 2>&1; log "tests rest rc=$? $(grep -c '^rc=0' "$L/gpu_rest/tests/cases.txt") passed of $(wc -l < "$L/gpu_rest/tests/cases.txt")" ) &
sleep 20; export OUT=$OUT_SAVE; snap
wait
finish
cat "$L/summary.txt"; cat "$L"/gpu_*/tests/cases.txt | grep -v '^rc=0' | cut -c1-300
