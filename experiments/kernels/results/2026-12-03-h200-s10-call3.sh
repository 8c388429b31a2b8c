# Session 10 (2026-12-03), call 3 (the session's last device minutes): what the session merged, on the H200.
# (a) [gpu] tests: every fa3_sm90 FP8 case (the softmax's same-bits shortcuts, the pre-transposed V and its
#     device quantisation) and naive's 16-bit S under the new score-precision bound, naive's fp32-S case;
# (b) issue 15: the FP8 forward timed with this tree's kernels and main 233fbe0's (.carry/k0) in one call
#     (d128 n8192; d256 this tree's only),
#     and V^T from the launch vs given pre-transposed (host and device quantisation);
# (c) issue 17: PLAN calls 10-11 (speed_vs_n at n 32768, 65536) with what is left.
# From the repository root, .carry/gpu and .carry/k0 carried.
set -uo pipefail
t_end=$((SECONDS + ${BUDGET:-540}))
left() { echo $((t_end - SECONDS > 5 ? t_end - SECONDS : 5)); }
L=$OUT/call3; mkdir -p "$L"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$L/gpu.txt"
date -u +%FT%TZ | tee -a "$L/gpu.txt"
OUT=$L/t TESTS_PARALLEL=8 TESTS_CPU=0 TESTS_BUDGET_S=${TESTS_S:-170} \
  TESTS_ONLY="${TESTS_RE:-fa3_sm90 FP8|pre-transposed V|16-bit S|naive configs are correct}" bash scripts/gpu.sh tests >"$L/tests.txt" 2>&1
C=$(ls "$L"/t/tests/cases.txt 2>/dev/null | head -1)
[ -n "$C" ] || { mkdir -p "$L/tx"; tar xzf "$L/t/tests.tgz" -C "$L/tx" 2>/dev/null; C=$(ls "$L"/tx/*/cases.txt | head -1); }
echo "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l <"$C"); not passed: $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 XDG_CACHE_HOME=/tmp/flashlab-cache
B=.carry/gpu/bin/fa-bench
F="--family fa3_sm90 --dtype fp8_e4m3 --runs 20"
bench() { local name=$1 cap=$2; shift 2; [ "$(left)" -ge "$cap" ] || { echo "$name: not run (budget)"; return; }; timeout -k 5 "$cap" "$B" "$@" --csv "$L/$name.csv" >"$L/$name.txt" 2>&1
  echo "$name rc=$? $(grep -E 'TFLOP/s' "$L/$name.txt" | tr -s ' ' | cut -d' ' -f2-12 | tr '\n' '|')"; }
bench new_d128 55 $F --causal both --head-dim 128 --seqlen 8192 --kernels-dir .carry/gpu/kernels_src
bench vt_given_d128 45 $F --causal both --head-dim 128 --seqlen 8192 --fp8-v-layout transposed --kernels-dir .carry/gpu/kernels_src
bench main_d128 55 $F --causal both --head-dim 128 --seqlen 8192 --kernels-dir .carry/k0/kernels_src
bench dq_rows_d128 40 $F --head-dim 128 --seqlen 8192 --causal no --fp8-quantize device --fp8-v-layout rows --kernels-dir .carry/gpu/kernels_src
bench dq_given_d128 40 $F --head-dim 128 --seqlen 8192 --causal no --fp8-quantize device --fp8-v-layout transposed --kernels-dir .carry/gpu/kernels_src
bench new_d256 45 $F --causal both --head-dim 256 --seqlen 8192 --kernels-dir .carry/gpu/kernels_src
SEQLENS="" HEAD_DIMS="128 64" FWD_FAMILIES="fa3_sm90 fa2_sm80 fa1" BWD_FAMILIES="" \
  timeout -k 5 "$(left)" bash scripts/gpu.sh experiment speed_vs_n >"$L/speed_vs_n.txt" 2>&1
grep '^step' "$L/speed_vs_n.txt"
date -u +%FT%TZ
tar czf "$OUT/call3.tgz" -C "$OUT" call3 && rm -rf "$L"
