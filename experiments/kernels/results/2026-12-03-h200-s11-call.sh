# Session 11 (2026-12-03): the device calls, one script, PART picks the call (from the repository root,
# .carry/gpu carried; everything under $OUT/s11-$PART, packed as one tarball).
#   PART=1  (a) [gpu] tests: every fa3_sm90 FP8 case and the device V^T writer (issue 15: the changed FP8
#               kernels' whole suite; three cases were cut by session 10's budget)
#           (b) issue 17: speed_vs_n PLAN calls 10-11 (n 32768, 65536 at d 128 and 64, peers beside)
#   PART=2  issue 15: the FP8 speed table beside bf16 fa3_sm90 in the same call (d 128/256 at n 8192/16384,
#           both masks), V given pre-transposed, the device-quantised pair
#   PART=3  issue 17: fa1_bwd at d 64 (cut in session 10); then issue 15's d 64 rows (FP8 beside bf16)
set -uo pipefail
part=${PART:?PART=1 or 2}
t_end=$((SECONDS + ${BUDGET:-560}))
left() { echo $((t_end - SECONDS > 5 ? t_end - SECONDS : 5)); }
L=$OUT/s11-$part; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$L/gpu.txt"
date -u +%FT%TZ | tee -a "$L/gpu.txt"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 XDG_CACHE_HOME=/tmp/flashlab-cache
pack() { tar czf "$OUT/s11-$part.tgz" -C "$OUT" "s11-$part"; }
B=.carry/gpu/bin/fa-bench
K="--kernels-dir .carry/gpu/kernels_src"
bench() {  # bench NAME CAP ARGS...: one checked and timed fa-bench table, skipped when the budget is short
  local name=$1 cap=$2; shift 2
  [ "$(left)" -ge "$cap" ] || { echo "$name: not run (budget)"; return; }
  echo "\$ fa-bench $*" >"$L/$name.txt"
  timeout -k 5 "$cap" "$B" "$@" $K --csv "$L/$name.csv" >>"$L/$name.txt" 2>&1
  echo "$name rc=$? $(grep -E 'TFLOP/s|checked' "$L/$name.txt" | tail -n 12 | tr -s ' ' | tr '\n' '|')"; pack; }
if [ "$part" = 1 ]; then
  OUT=$L/t TESTS_PARALLEL=8 TESTS_CPU=0 TESTS_BUDGET_S=${TESTS_S:-260} \
    TESTS_ONLY='fa3_sm90 FP8|pre-transposed V' bash scripts/gpu.sh tests >"$L/tests.txt" 2>&1
  C=$(ls "$L"/t/tests/cases.txt 2>/dev/null | head -1)
  [ -n "$C" ] || { mkdir -p "$L/tx"; tar xzf "$L/t/tests.tgz" -C "$L/tx" 2>/dev/null; C=$(ls "$L"/tx/*/cases.txt | head -1); }
  echo "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l <"$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')"
  pack
  SEQLENS="" HEAD_DIMS="128 64" FWD_FAMILIES="fa3_sm90 fa2_sm80 fa1" BWD_FAMILIES="" \
    timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n >"$L/speed_vs_n.txt" 2>&1
  grep '^step' "$L/speed_vs_n.txt"
elif [ "$part" = 2 ]; then
  F="--family fa3_sm90 --runs 20"
  bench fp8_d128_256 240 $F --dtype fp8_e4m3 --head-dim 128,256 --seqlen 8192,16384 --causal both
  bench bf16_d128_256 180 $F --dtype bf16 --head-dim 128,256 --seqlen 8192,16384 --causal both
  bench fp8_vt_d128 110 $F --dtype fp8_e4m3 --head-dim 128 --seqlen 8192,16384 --causal both --fp8-v-layout transposed
  bench fp8_dq_rows_d128 40 $F --dtype fp8_e4m3 --head-dim 128 --seqlen 8192 --causal no --fp8-quantize device --fp8-v-layout rows
  bench fp8_dq_vt_d128 40 $F --dtype fp8_e4m3 --head-dim 128 --seqlen 8192 --causal no --fp8-quantize device --fp8-v-layout transposed
else
  HEAD_DIMS=64 FWD_FAMILIES="" BWD_FAMILIES="fa1_bwd" LONG_SEQLENS="" PEERS="" \
    timeout -k 5 "$(($(left) < 300 ? $(left) : 300))" bash scripts/gpu.sh experiment speed_vs_n >"$L/speed_vs_n.txt" 2>&1
  grep '^step' "$L/speed_vs_n.txt"
  F="--family fa3_sm90 --runs 20"
  bench fp8_d64 120 $F --dtype fp8_e4m3 --head-dim 64 --seqlen 8192,16384 --causal both
  bench bf16_d64 90 $F --dtype bf16 --head-dim 64 --seqlen 8192,16384 --causal both
fi
date -u +%FT%TZ
pack
