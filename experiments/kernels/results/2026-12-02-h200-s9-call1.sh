# Session 9 (2026-12-02), call 1: what session 8 merged and never ran on the H200.
# (a) #15: the rewritten in-kernel V transpose (vtrans2) timed beside the transpose launch, same call;
# (b) #17: speed_vs_n's naive and fa1 rows (the fair baseline) at d128, each shape checked by fa-bench first;
# (c) then, with nothing timed: [gpu] tests of naive, fa1, every family's default, fa1_bwd and the V
#     transpose, beside compute-sanitizer memcheck + racecheck on naive and fa1.
BUDGET=${BUDGET:-565}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s9call1 start"
F="--family fa3_sm90 --dtype fp8_e4m3 --runs 20 --causal both --seqlen 8192"
bench d128_tv0 45 $F --head-dim 128 --config kTransposeV=0
bench d128_tv1 45 $F --head-dim 128 --config kTransposeV=1
bench d256_64_tv0 45 $F --head-dim 256 --config kBlockN=64,kIntraWgOverlap=1,kTransposeV=0
bench d256_64_tv1 45 $F --head-dim 256 --config kBlockN=64,kIntraWgOverlap=1,kTransposeV=1
bench d64_tv1 40 $F --head-dim 64 --config kTransposeV=1
t0=$SECONDS
HEAD_DIMS=128 FWD_FAMILIES="naive fa1" BWD_FAMILIES="" LONG_SEQLENS="" PEERS="" timeout --kill-after=5 "$(cap 230)" \
  bash scripts/gpu.sh experiment speed_vs_n > "$L/speed_vs_n.txt" 2>&1
log "speed_vs_n rc=$? in $((SECONDS - t0)) s: $(grep -E 'naive|fa1' "$L/speed_vs_n.txt" | tail -n 30 | cut -c1-140 | tr '\n' '|')"
( OUT=$L/gpu_tests TESTS_PARALLEL=8 TESTS_CPU=0 TESTS_BUDGET_S=$(cap 230) \
    TESTS_ONLY='naive|fa1|every family|in-kernel V transpose|stability study' bash scripts/gpu.sh tests > "$L/tests.txt" 2>&1
  C=$L/gpu_tests/tests/cases.txt; [ -f "$C" ] || { mkdir -p "$L/t"; tar xzf "$L/gpu_tests/tests.tgz" -C "$L/t" 2>/dev/null; C=$(ls "$L"/t/*/cases.txt 2>/dev/null | head -1); }
  log "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l < "$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')" ) &
( sleep 4; OUT=$L/san FAMILIES_FWD="naive fa1" FAMILIES_BWD=" " SANITIZER_TIMEOUT=90 timeout "$(cap 220)" bash scripts/gpu.sh sanitizers > "$L/sanitizers.txt" 2>&1
  log "sanitizers rc=$? $(grep -h 'rc=' "$L/sanitizers.txt" | cut -c1-110 | tr '\n' '|')" ) &
wait
cp "$OUT/speed_vs_n.tgz" "$OUT/speed_vs_n.summary.txt" "$L/" 2>/dev/null
finish
cat /tmp/s-done/summary.txt
