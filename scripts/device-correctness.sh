#!/usr/bin/env bash
# One H200 round of correctness evidence, run from the carried folder (.carry/gpu): every [gpu] test,
# compute-sanitizer (memcheck + racecheck) on one small config per family, and the forward families'
# fa-check over every input family (fa-bench --check-only at small and awkward shapes). Logs under
# $OUT/correctness (tarred by the caller if needed); one summary line per step on stdout.
#   device call: cd .carry/gpu && bash device-correctness.sh
# The sanitized runs are tiny (fa-bench's four awkward edge problems plus b1 h2 n300): racecheck is slow.
# Environment: SANITIZER_TIMEOUT (80 s) / SANITIZER_TIMEOUT_BWD (120 s) per run, FAMILIES_FWD (naive fa1 fa2_sm80), FAMILIES_BWD (fa2_sm80_bwd), SANITIZE (1), TESTS (1).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}/correctness
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache
cd "$here"
if [ "${TESTS:-1}" = 1 ]; then
  OUT="$out" FA_SKIP_CPU_RUNS="test_numerics test_db test_kernels_src test_tuner" timeout 300 bash device-gpu-tests.sh \
    >"$out/gpu_tests_summary.txt" 2>&1
  echo "gpu tests rc=$?"; cat "$out/gpu_tests_summary.txt"
  # The runtime smoke test once more with its full output: NVRTC's log came back empty here last time.
  bin/test_runtime "NVRTC compiles the smoke kernels to CUBIN for sm_80 and sm_90a" -s >"$out/nvrtc_smoke.txt" 2>&1
  echo "nvrtc smoke rc=$? ($(grep -c 'ptxas info' "$out/nvrtc_smoke.txt") ptxas lines)"
fi
if [ "${SANITIZE:-1}" = 1 ]; then
  for fam in ${FAMILIES_FWD:-naive fa1 fa2_sm80}; do
    for tool in memcheck racecheck; do
      timeout ${SANITIZER_TIMEOUT:-80} compute-sanitizer --tool $tool --error-exitcode 9 bin/fa-bench --family $fam --head-dim 64 \
        --seqlen 300 --batch 1 --heads 2 --causal yes --check-only >"$out/sanitizer_${fam}_${tool}.txt" 2>&1
      echo "sanitizer $fam $tool rc=$? $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/sanitizer_${fam}_${tool}.txt")"
    done
  done
  for fam in ${FAMILIES_BWD:-fa2_sm80_bwd}; do
    for tool in memcheck racecheck; do
      timeout ${SANITIZER_TIMEOUT_BWD:-120} compute-sanitizer --tool $tool --error-exitcode 9 bin/fa-bench --family $fam --direction bwd \
        --head-dim 64 --seqlen 300 --batch 1 --heads 2 --causal yes --check-only >"$out/sanitizer_${fam}_${tool}.txt" 2>&1
      echo "sanitizer $fam $tool rc=$? $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$out/sanitizer_${fam}_${tool}.txt")"
    done
  done
fi
