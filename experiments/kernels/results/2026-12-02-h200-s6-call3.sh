# Session 6, call 3: correctness after issue 11's device layer (devlayer2: the device problem, run_once and
# the FP8 operand upload in device/, the kernel check and seeded inputs in numerics/gpu/) and the parallel
# input draw: every [gpu] test case; fa-mutate --target gpu on fa1 (bf16, fp16) and fa2_fp8 (e4m3), not rerun
# since the kernel-parts refactor; then fa-tune's crash and fault survival on the device (fault_demo.sh).
BUDGET=${BUDGET:-560}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s6call3 start"
( OUT=$L/gpu_tests TESTS_PARALLEL=10 TESTS_CPU=0 TESTS_BUDGET_S=400 bash scripts/gpu.sh tests > "$L/tests.txt" 2>&1
  C=$L/gpu_tests/tests/cases.txt; [ -f "$C" ] || { mkdir -p "$L/t"; tar xzf "$L/gpu_tests/tests.tgz" -C "$L/t" 2>/dev/null; C=$(ls "$L"/t/*/cases.txt 2>/dev/null | head -1); }
  log "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l < "$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')" ) &
( sleep 3; OUT=$L/mut MUTANTS_RUNS="fa1:bf16,fp16 fa2_fp8:fp8_e4m3" MUTANTS_BUDGET_S=330 bash scripts/gpu.sh mutants > "$L/mutants.txt" 2>&1
  log "mutants rc=$? $(grep -h 'exit' "$L/mut/mutants/summary.txt" "$L/mutants.txt" 2>/dev/null | cut -c1-120 | tr '\n' '|')"
  snap; source .carry/session/fault_demo.sh; fault_demo 150 ) &
wait
finish
cat /tmp/s-done/summary.txt
