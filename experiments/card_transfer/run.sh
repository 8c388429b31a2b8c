#!/usr/bin/env bash
# card_transfer: do the best configs tuned on one card hold on another? The shipped seeds
# (db/seed/best_configs.tsv) were tuned on the H200; a user on an H100 gets them. On the present GPU, for
# FAMILY DTYPE at n SEQLEN (headline b = 16384/n, h = 2048/d), each head dim, full and causal (a family
# named *_bwd is tuned and timed backward):
#   tune      fa-tune on a fresh database: bayes, BUDGET evaluations a problem (the family default first),
#             so this card's best of BUDGET (not its optimum: fa3_sm90's forward space holds 388 configs
#             at d64);
#   shipped   fa-bench with SEED_GPU's seed config of each problem, on this card;
#   default   fa-bench with the family defaults: fa-bench's and fa-tune's timings of the same config in the
#             same call, the check that the two protocols agree.
# summarize.py joins them (TFLOP/s and ratios per problem) into table.md. About 4 minutes on a fresh machine
# (NVRTC compiles the candidates on the machine's cores; each problem's float64 reference once).
#   CARRY=$PWD/.carry/grid bash scripts/gpu.sh experiment card_transfer      (or .carry/gpu)
# Environment: FAMILY (fa3_sm90), DTYPE (bf16), BUDGET (30), SEED_GPU (NVIDIA H200), HEAD_DIMS (64,128,256),
# SEQLEN (4096), TUNE_LIMIT_S (170). Another family or dtype than the first run's works in a folder (and a
# tarball) of its own, card_transfer-FAMILY-DTYPE, so that its steps never resume the first run's.
set -uo pipefail
FL_COMMAND="$0${FAMILY:+ FAMILY=$FAMILY}${DTYPE:+ DTYPE=$DTYPE}${BUDGET:+ BUDGET=$BUDGET}\
${SEED_GPU:+ SEED_GPU=$SEED_GPU}${HEAD_DIMS:+ HEAD_DIMS=$HEAD_DIMS}${SEQLEN:+ SEQLEN=$SEQLEN}\
${TUNE_LIMIT_S:+ TUNE_LIMIT_S=$TUNE_LIMIT_S}"
source "$(dirname "$0")/../lib.sh"
family=${FAMILY:-fa3_sm90}
dtype=${DTYPE:-bf16}
direction=fwd
[[ $family == *_bwd ]] && direction=bwd
question=card_transfer
[ "$family/$dtype" = fa3_sm90/bf16 ] || question=card_transfer-$family-$dtype
fl_init "$question"
budget=${BUDGET:-30}
seed_gpu=${SEED_GPU:-NVIDIA H200}
dims=${HEAD_DIMS:-64,128,256}
n=${SEQLEN:-4096}
limit=${TUNE_LIMIT_S:-170}
seeds="$fl_here/../../db/seed/best_configs.tsv"
problems=$(($(tr , '\n' <<<"$dims" | wc -l) * 2))

fl_step tune $((limit + 60)) "$fl_bin/fa-tune" --db "$fl_work/tune.sqlite" --family "$family" \
  --direction "$direction" --dtype "$dtype" --head-dim "$dims" --seqlen "$n" --causal both --strategy bayes \
  --budget $((budget * problems)) --time-limit "$limit" --json tune.json --export-measurements tune.tsv
fl_step default 180 "$fl_bin/fa-bench" --family "$family" --direction "$direction" --dtype "$dtype" \
  --head-dim "$dims" --seqlen "$n" --causal both --csv default.csv
for d in ${dims//,/ }; do
  for causal in no yes; do
    config=$(python3 "$fl_here/summarize.py" --seed-config "$seeds" "$seed_gpu" "$family" "$dtype" \
      "$direction" "$d" "$causal" "$n")
    if [ -z "$config" ]; then
      echo "step shipped_d${d}_causal_$causal: no seed of $seed_gpu for it" |
        tee -a "$fl_out/$question.summary.txt"
      continue
    fi
    fl_step "shipped_d${d}_causal_$causal" 120 "$fl_bin/fa-bench" --family "$family" \
      --direction "$direction" --dtype "$dtype" --head-dim "$d" --seqlen "$n" --causal "$causal" \
      --config "$config" --csv "shipped_d${d}_causal_$causal.csv"
  done
done
python3 "$fl_here/summarize.py" "$fl_work" "$seed_gpu" >"$fl_work/table.md" 2>"$fl_work/summarize.log" &&
  cat "$fl_work/table.md"
fl_sync
