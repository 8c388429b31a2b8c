#!/usr/bin/env bash
# fa3_sm90 on the H200, one device call: SASS of the default configs, the [gpu] correctness tests, the
# default configs beside PyTorch's FlashAttention-2 and cuDNN (peers/run.sh, same protocol, same
# run), the mechanism ablation at d128, and compute-sanitizer on one config per head dim.
# Runs from the repository root with the carried binaries (scripts/build-portable.sh makes .carry/gpu):
#   device call: bash scripts/gpu.sh experiment fa3_sm90
#                (or CARRY=$PWD/.carry/gpu bash experiments/fa3_sm90/run.sh)
# SASS: cubins compiled beforehand with nvcc into $CARRY/fa3_sass/ (optional) are disassembled there.
# Environment: STEPS (default "sass tests bench ablation sanitize"; also "mutate", fa-mutate --target gpu
# on fa3_sm90, and "recheck", the fa2_sm80 [gpu] tests and speed after a change to the shared parts),
# SEQLENS, HEAD_DIMS, DTYPES, SANITIZE_DIMS, SANITIZE_TOOLS, *_TIMEOUT.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$(cd "${CARRY:?the carried bin/ and kernels_src/ (scripts/build-portable.sh: .carry/gpu)}" && pwd)
out=${OUT:-/tmp/flashlab-out}/fa3
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache PYTHONUNBUFFERED=1
steps=${STEPS:-sass tests bench ablation sanitize}
seqlens=${SEQLENS:-1024,2048,4096,8192,16384}
dims=${HEAD_DIMS:-64,128,256}
dtypes=${DTYPES:-bf16}
cd "$here"
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
} | tee "$out/header.txt"
for step in $steps; do
  case $step in
    sass)
      for c in fa3_sass/*.cubin; do
        [ -f "$c" ] || continue
        cuobjdump --dump-sass "$c" >"$out/$(basename "$c" .cubin).sass" 2>&1
        s="$out/$(basename "$c" .cubin).sass"
        echo "sass $(basename "$c"): HGMMA $(grep -c HGMMA "$s") LDL $(grep -c 'LDL' "$s") \
STL $(grep -c 'STL' "$s") USETMAXREG $(grep -c USETMAXREG "$s") UTMALDG $(grep -c UTMALDG "$s") \
WARPSYNC $(grep -c 'WARPGROUP.DEPBAR\|WARPGROUP.ARRIVE' "$s")"
      done ;;
    tests)
      timeout ${TESTS_TIMEOUT:-480} bin/test_kernels_src "${TESTS_FILTER:-fa3_sm90*}" -d yes \
        >"$out/gpu_tests.txt" 2>&1
      echo "fa3 gpu tests rc=$? $(grep -E 'test cases|assertions' "$out/gpu_tests.txt" | tail -1)"
      grep -B2 -A12 "FAILED\|failed" "$out/gpu_tests.txt" | head -60 ;;
    bench)
      OUT="$out" CARRY="$here" FWD_FAMILY=fa3_sm90 DIRECTIONS=fwd DTYPES=$dtypes HEAD_DIMS=$dims \
        SEQLENS=$seqlens timeout 420 bash "$repo/experiments/peers/run.sh" >"$out/peers_log.txt" 2>&1
      echo "peers rc=$?"; cat "$out/peers/table.md" 2>/dev/null | tail -40 ;;
    ablation)
      base="kConsumers=2,kBlockN=128,kStages=2,kPingPong=1,kIntraWgOverlap=1,kPersistent=1"
      for v in "" kPingPong=0 kIntraWgOverlap=0 "kPingPong=0,kIntraWgOverlap=0" kPersistent=0 kStages=3 \
               kBlockN=176 "kConsumers=1,kPingPong=0" "kConsumers=3,kBlockN=96"; do
        cfg=$base; [ -n "$v" ] && cfg="$base,$v"
        cfg=$(python3 -c "import sys; d=dict(x.split('=') for x in sys.argv[1].split(',')); \
print(','.join(k+'='+v for k,v in d.items()))" "$cfg")
        name=$(echo "${v:-base}" | tr '=,' '-_')
        timeout 120 bin/fa-bench --family fa3_sm90 --config "$cfg" --dtype bf16 --head-dim 128 \
          --seqlen 4096,8192 --causal both >"$out/ablation_$name.txt" 2>&1
        echo "ablation ${v:-base} rc=$?"; grep -E "TFLOP" "$out/ablation_$name.txt" | tail -4
      done ;;
    mutate)
      timeout ${MUTATE_TIMEOUT:-240} bin/fa-mutate --target gpu --family fa3_sm90 --dtype bf16 --block-n 64 \
        --seqlen 200 --json "$out/mutants_fa3_sm90.json" >"$out/mutants_fa3_sm90.txt" 2>&1
      echo "fa-mutate fa3_sm90 rc=$?"; tail -25 "$out/mutants_fa3_sm90.txt" ;;
    recheck)
      # The sm80 families share the softmax and epilogue parts that fa3_sm90 split up: their [gpu] tests
      # again.
      timeout ${RECHECK_TIMEOUT:-240} bin/test_kernels_src \
        "fa2_sm80 default configs are correct on awkward problems,\
fa2_sm80 forward mutants are caught by the input families" \
        >"$out/recheck_fa2.txt" 2>&1
      echo "fa2_sm80 gpu tests rc=$? $(grep -E 'test cases|All tests' "$out/recheck_fa2.txt" | tail -1)"
      timeout 120 bin/fa-bench --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 4096,8192 --causal no \
        >"$out/recheck_fa2_speed.txt" 2>&1
      echo "fa2_sm80 rc=$?"; grep TFLOP "$out/recheck_fa2_speed.txt" ;;
    sanitize)
      for d in ${SANITIZE_DIMS:-64 128 256}; do
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck synccheck}; do
          timeout ${SANITIZER_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 bin/fa-bench \
            --family fa3_sm90 --head-dim $d --seqlen 300 --batch 1 --heads 2 --causal yes --check-only \
            >"$out/sanitizer_d${d}_${tool}.txt" 2>&1
          echo "sanitizer d$d $tool rc=$? $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY\|SYNCCHECK SUMMARY' \
            "$out/sanitizer_d${d}_${tool}.txt")"
        done
      done ;;
  esac
  # After every step, so that a call cut short still brings back what finished.
  tar -C "$out/.." -czf "${OUT:-/tmp/flashlab-out}/fa3_logs.tgz" fa3
done
