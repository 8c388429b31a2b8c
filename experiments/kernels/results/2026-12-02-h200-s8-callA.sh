# Session 8 (2026-12-02), call A: issue 15 on the H200. FP8 in-kernel V transpose (kTransposeV=1, built in
# session 7, never run on the GPU) timed beside the transpose launch (kTransposeV=0), each shape checked
# first by fa-bench; fa-tune over the FP8 space (item 6); then, with nothing timed, the FP8 [gpu] tests
# (the two kTransposeV cases first) beside one ncu profile of the d128 FP8 forward (the softmax-bound claim).
BUDGET=${BUDGET:-540}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s8callA start"
F="--family fa3_sm90 --dtype fp8_e4m3 --runs 20 --causal both"
bench d128_tv0 110 $F --head-dim 128 --seqlen 8192,16384 --config kTransposeV=0
bench d128_tv1 110 $F --head-dim 128 --seqlen 8192,16384 --config kTransposeV=1
bench d256_64_tv0 60 $F --head-dim 256 --seqlen 8192 --config kBlockN=64,kIntraWgOverlap=1,kTransposeV=0
bench d256_64_tv1 60 $F --head-dim 256 --seqlen 8192 --config kBlockN=64,kIntraWgOverlap=1,kTransposeV=1
bench d64_tv1 50 $F --head-dim 64 --seqlen 8192 --config kTransposeV=1
# fa-tune over fa3_sm90's FP8 space at one headline shape (item 6): defaults first, then bayes.
timeout --kill-after=5 "$(cap 100)" "$B/fa-tune" --arch sm90 --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 \
  --seqlen 8192 --causal no --strategy bayes --time-limit 80 --db /tmp/flashlab-experiments/fp8tune.sqlite > "$L/fa_tune_fp8.txt" 2>&1
log "fa-tune fp8 rc=$? $(tail -n 12 "$L/fa_tune_fp8.txt" | cut -c1-160 | tr '\n' '|')"
( OUT=$L/gpu_tests TESTS_PARALLEL=10 TESTS_CPU=0 TESTS_BUDGET_S=$(cap 240) TESTS_ONLY='fa3_sm90 FP8' bash scripts/gpu.sh tests > "$L/tests.txt" 2>&1
  C=$L/gpu_tests/tests/cases.txt; [ -f "$C" ] || { mkdir -p "$L/t"; tar xzf "$L/gpu_tests/tests.tgz" -C "$L/t" 2>/dev/null; C=$(ls "$L"/t/*/cases.txt 2>/dev/null | head -1); }
  log "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l < "$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')" ) &
( sleep 3; timeout --kill-after=5 "$(cap 200)" ncu --clock-control none -k regex:fa3_sm90_fwd -c 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats --section WarpStateStats \
    --section SchedulerStats --section Occupancy --section LaunchStats \
    "$B/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 --seqlen 8192 --causal no --launch-once > "$L/ncu_d128_fp8.txt" 2>&1
  log "ncu rc=$? $(grep -E 'Compute \(SM\) Throughput|Duration|Issue Slots Busy|Registers Per|No Eligible|Warp Cycles Per Issued' "$L/ncu_d128_fp8.txt" | tr -s ' ' | cut -c1-80 | tr '\n' '|')" ) &
( sleep 6; OUT=$L/san FAMILIES_FWD=flash_decode FAMILIES_BWD=" " SANITIZER_TIMEOUT=100 timeout "$(cap 220)" bash scripts/gpu.sh sanitizers > "$L/sanitizers.txt" 2>&1
  log "sanitizers rc=$? $(grep -h 'rc=' "$L/sanitizers.txt" | cut -c1-110 | tr '\n' '|')" ) &
wait
finish
cat /tmp/s-done/summary.txt
