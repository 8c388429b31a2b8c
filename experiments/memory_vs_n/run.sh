#!/usr/bin/env bash
# memory_vs_n: device memory of one forward and of forward + backward against n, b = 1, h = 16, d = 128,
# bf16, non-causal (the shape where PyTorch's math path used 37 GB extra at 16k and failed at 32k on
# 2026-11-29): our naive (n^2 S and P), fa1, fa2_sm80 (what each problem allocates: fa-bench's
# device_bytes; --launch-once runs the launch sequence once, no timing) and fa2_sm80_bwd / fa1_bwd, beside
# the peak extra memory of PyTorch's math, FlashAttention-2 and cuDNN backends (peers.py --memory).
# One device call, ~4 min:   CARRY=.carry/gpu bash experiments/memory_vs_n/run.sh
# Environment: SEQLENS (1024,...,65536), HEADS (16), HEAD_DIM (128).
set -uo pipefail
FL_COMMAND="$0${SEQLENS:+ SEQLENS=$SEQLENS}"
source "$(dirname "$0")/../lib.sh"
fl_init memory_vs_n
seqlens=${SEQLENS:-1024,2048,4096,8192,16384,32768,65536}
heads=${HEADS:-16}
d=${HEAD_DIM:-128}
shape=(--dtype bf16 --head-dim "$d" --causal no --batch 1 --heads "$heads")
for fam in naive fa1 fa2_sm80; do
  # One step per n: naive runs out of memory at some n, and the larger ones must still be tried.
  for n in ${seqlens//,/ }; do
    fl_step "alloc_${fam}_fwd_n$n" 120 "$fl_bin/fa-bench" --family "$fam" "${shape[@]}" --seqlen "$n" \
      --launch-once --csv "alloc_${fam}_fwd_n$n.csv"
  done
done
for fam in fa1_bwd fa2_sm80_bwd; do
  fl_step "alloc_${fam}" 300 "$fl_bin/fa-bench" --family "$fam" --direction bwd "${shape[@]}" --seqlen "$seqlens" \
    --runs 20 --warmup 1 --csv "alloc_${fam}.csv"
done
fl_step peers 420 python3 "$fl_here/../peers/peers.py" --bwd --memory --backends math,flash,cudnn --dtype bf16 \
  --head-dim "$d" --seqlen "$seqlens" --batch 1 --heads "$heads" --input-sets 1 --out peers.csv
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log" && cat "$fl_work/table.md"
fl_sync
fl_plot
