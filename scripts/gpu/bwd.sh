# Recipe `bwd` (sourced by scripts/gpu.sh): the backward families on the GPU, ~5 min in all:
#   1. the [gpu] backward tests: both dQ modes of fa2_sm80_bwd and fa1_bwd on every input family, mutants
#      caught in every path, the deterministic mode bit-identical run to run;
#   2. fa-bench --check-only of each backward family's defaults (bf16 and fp16, d 64/128, causal and not);
#   3. fa2_sm80_bwd timed in both dQ modes (the default is the deterministic pass), n 1024..16384, d 64/128,
#      bf16 and fp16, beside PyTorch's FA2 and cuDNN backward in the same run.
# BWD_SPACE=1 first compiles every config of both backward spaces ([.nvrtc-space]: CPU work, minutes on 2
# cores, faster on the GPU machine's 16). Each step's limit is capped by what is left of BWD_BUDGET_S
# (340 s); a step with < 10 s left is skipped.
gpu_line
budget_s=${BWD_BUDGET_S:-340}
cap() { local left=$((budget_s - SECONDS)); [ "$left" -lt "$1" ] && echo "$left" || echo "$1"; }
enough() { [ $((budget_s - SECONDS)) -ge 10 ] || { note "skipped (time budget): $*"; return 1; }; }
SECONDS=0
if [ "${BWD_SPACE:-0}" = 1 ]; then
  timeout "$(cap 200)" "$bin/test_kernels_src" "every config of both backward spaces compiles for sm_90a" \
    -r compact >"$dir/bwd_space.txt" 2>&1
  note "backward spaces compile rc=$?: $(last_line "$dir/bwd_space.txt")"
fi

timeout "$(cap 150)" "$bin/test_kernels_src" \
  "backward families*,backward mutants*,fa2_sm80_bwd deterministic*" -r compact >"$dir/bwd_gpu_tests.txt" 2>&1
note "bwd [gpu] tests rc=$?: $(last_line "$dir/bwd_gpu_tests.txt")"

for fam in fa2_sm80_bwd fa1_bwd; do
  enough "check $fam" || continue
  timeout "$(cap 50)" "$bin/fa-bench" --family $fam --direction bwd --dtype bf16,fp16 --head-dim 64,128 \
    --seqlen 1024 --causal both --check-only >"$dir/check_$fam.txt" 2>&1
  note "fa-bench --check-only $fam rc=$? ($(grep -c ' check ' "$dir/check_$fam.txt") checks," \
    "$(grep -c FAIL "$dir/check_$fam.txt") failed)"
done

seqlens=1024,2048,4096,8192,16384
# The family default (the deterministic dQ pass) at d 64 and 128, then the atomic-dQ mode at the tiles
# picked from ptxas (device/families/fa2_sm80_bwd.cpp, tests/device/families/backward_families_test.cpp).
# One fa-bench per run, so a run cut by its limit loses only itself.
atomic_d64=kBlockM=64,kBlockN=128,kNWarps=8,kStages=2,kDqAtomic=1,kQBlockM=64,kQBlockN=32
atomic_d128=kBlockM=32,kBlockN=128,kNWarps=8,kStages=1,kDqAtomic=1,kQBlockM=64,kQBlockN=32
runs="default:64,128: atomic_d64:64:$atomic_d64 atomic_d128:128:$atomic_d128"
for run in $runs; do
  IFS=: read -r name dims config <<<"$run"
  enough "timing $name" || continue
  timeout "$(cap 60)" "$bin/fa-bench" --family fa2_sm80_bwd --direction bwd --dtype bf16,fp16 \
    --head-dim "$dims" --seqlen $seqlens --causal both --runs 20 ${config:+--config "$config"} \
    --csv "$dir/bench_bwd_$name.csv" >"$dir/bench_$name.txt" 2>&1
  note "fa-bench fa2_sm80_bwd $name rc=$? ($(grep -c TFLOP "$dir/bench_$name.txt") shapes timed)"
done
enough "peers" &&
  timeout "$(cap 90)" python3 experiments/peers/peers.py --bwd --out "$dir/peers_bwd.csv" --dtype bf16,fp16 \
    --head-dim 64,128 --seqlen $seqlens >"$dir/peers_bwd.txt" 2>&1
note "peers rc=$?"
# One table, ours beside the peers (the atomic rows first, then the default's).
python3 experiments/peers/compare.py "$dir" >"$dir/table.md" 2>&1 && cat "$dir/table.md"
true
