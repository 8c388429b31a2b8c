#!/usr/bin/env bash
# fa3_sm90_bwd on the H200, one device call (issue 16): a smoke check of the defaults (fa-bench
# --check-only, small problems: a wrong or hanging kernel shows here first, in seconds), the [gpu] tests
# (every input family, the deterministic mode's 20 reruns, the mutants), the defaults beside PyTorch's
# FlashAttention-2 and cuDNN backward (peers/run.sh, same protocol, same run), the dQ-mode and
# mechanism ablation at d128, compute-sanitizer on one config per head dim, fa-mutate on fa3_sm90 (whose
# backward is this family).
# Runs from the repository root with the carried binaries (scripts/build-portable.sh makes .carry/gpu):
#   device call: bash scripts/gpu.sh experiment fa3_sm90_bwd
# Environment: STEPS (default "smoke tests bench ablation sanitize"; also "mutate"), SEQLENS, HEAD_DIMS,
# DTYPES, SANITIZE_DIMS, SANITIZE_TOOLS, TESTS_FILTER. Steps resume (experiments/lib.sh): rerunning the
# same call on a warm machine skips the steps that passed (FL_FRESH=1 starts over).
set -uo pipefail
FL_COMMAND="$0 STEPS=\"${STEPS:-smoke tests bench ablation sanitize}\"${SEQLENS:+ SEQLENS=$SEQLENS}\
${HEAD_DIMS:+ HEAD_DIMS=$HEAD_DIMS}"
source "$(dirname "$0")/../lib.sh"
fl_init fa3_sm90_bwd
seqlens=${SEQLENS:-1024,2048,4096,8192,16384}
dims=${HEAD_DIMS:-64,128,256}
dtypes=${DTYPES:-bf16}
bench=("$fl_bin/fa-bench" --family fa3_sm90_bwd --direction bwd)
for step in ${STEPS:-smoke tests bench ablation sanitize}; do
  case $step in
    smoke)
      for d in ${dims//,/ }; do
        fl_step "smoke_d$d" 120 "${bench[@]}" --head-dim "$d" --dtype bf16,fp16 --seqlen 1000 --batch 1 \
          --heads 4 --causal both --check-only
      done
      for mode in 1 2; do  # the deterministic and the bulk reduce-add dQ at d128
        fl_step "smoke_d128_dq$mode" 120 "${bench[@]}" --config "kDqMode=$mode" --head-dim 128 --dtype bf16 \
          --seqlen 1000 --batch 1 --heads 4 --causal both --check-only
      done ;;
    tests)
      # One step per test case (each resumable, each packed as it ends), or TESTS_FILTER as one step.
      if [ -n "${TESTS_FILTER:-}" ]; then
        fl_step tests 420 "$fl_bin/test_kernels_src" "$TESTS_FILTER" -d yes
      else
        fl_step tests_defaults 300 "$fl_bin/test_kernels_src" "fa3_sm90_bwd defaults are correct*" -d yes
        fl_step tests_mechanisms 240 "$fl_bin/test_kernels_src" \
          "fa3_sm90_bwd deterministic mode and the other*" -d yes
        fl_step tests_reruns 120 "$fl_bin/test_kernels_src" "fa3_sm90_bwd deterministic mode gives*" -d yes
        fl_step tests_mutants 240 "$fl_bin/test_kernels_src" "fa3_sm90_bwd backward mutants*" -d yes
      fi ;;
    bench)
      # Ours and the sm80 backward, then PyTorch's backends, one table (experiments/peers/compare.py).
      fl_step bench 480 env OUT="$fl_work" CARRY="$(dirname "$fl_bin")" DIRECTIONS=bwd \
        BWD_FAMILY=fa3_sm90_bwd DTYPES="$dtypes" HEAD_DIMS="$dims" SEQLENS="$seqlens" \
        bash "$fl_here/../peers/run.sh" ;;
    ablation)
      # Each mechanism against the d128 default (kBlockM=64, kBlockN=128, kConsumers=2, kStages=2, kDqMode=0:
      # REDs; 1: deterministic REDs; 2: TMA bulk reduce-add).
      for v in "" kDqMode=1 kDqMode=2 kStages=1 "kConsumers=1,kBlockN=64"; do
        name=$(echo "${v:-default}" | tr '=,' '-_')
        fl_step "ablation_$name" 150 "${bench[@]}" ${v:+--config "$v"} --dtype bf16 --head-dim 128 \
          --seqlen 2048,8192 --causal both
      done ;;
    sanitize)
      for d in ${SANITIZE_DIMS:-64 128 256}; do
        for tool in ${SANITIZE_TOOLS:-memcheck racecheck}; do
          fl_step "sanitizer_d${d}_$tool" 150 compute-sanitizer --tool "$tool" --error-exitcode 9 \
            "${bench[@]}" --head-dim "$d" --seqlen 300 --batch 1 --heads 2 --causal yes --check-only
        done
      done ;;
    mutate)
      fl_step mutate 300 "$fl_bin/fa-mutate" --target gpu --family fa3_sm90 --dtype bf16 --block-n 64 \
        --seqlen 200 --json mutants_fa3_sm90.json ;;
    *) echo "unknown step $step" ;;
  esac
done
fl_sync
