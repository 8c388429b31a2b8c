#!/usr/bin/env bash
# memory_vs_n: device memory of one forward and of forward + backward against n, b = 1, h = 16, d = 128,
# bf16, non-causal (the shape where PyTorch's math path used 37 GB extra at 16k and failed at 32k on
# 2026-11-29): our naive (n^2 S and P), fa1, fa2_sm80 (what each problem allocates: fa-bench's
# device_bytes; --launch-once runs the launch sequence once, no timing) and fa2_sm80_bwd / fa1_bwd, beside
# the peak extra memory of PyTorch's math, FlashAttention-2 and cuDNN backends (peers.py --memory-only).
# Nothing here is timed: the question is bytes (the backward's device_bytes under --check-only, PyTorch's
# peaks without the 35 timed calls per row). One device call, ~3 min:
#   CARRY=.carry/gpu bash experiments/memory_vs_n/run.sh
# Environment: SEQLENS (1024,...,65536), HEADS (16), HEAD_DIM (128).
set -uo pipefail
FL_COMMAND="$0${SEQLENS:+ SEQLENS=$SEQLENS}"
source "$(dirname "$0")/../lib.sh"
fl_init memory_vs_n
seqlens=${SEQLENS:-1024,2048,4096,8192,16384,32768,65536}
heads=${HEADS:-16}
d=${HEAD_DIM:-128}
shape=(--dtype bf16 --head-dim "$d" --causal no --batch 1 --heads "$heads")
# One step per n for naive: it runs out of memory at some n, and the larger ones must still be tried. fa1 and
# fa2_sm80 (linear memory: 1 GiB at n 65536) run every n in one process.
for n in ${seqlens//,/ }; do
  fl_step "alloc_naive_fwd_n$n" 120 "$fl_bin/fa-bench" --family naive "${shape[@]}" --seqlen "$n" \
    --launch-once --csv "alloc_naive_fwd_n$n.csv"
done
for fam in fa1 fa2_sm80; do
  fl_step "alloc_${fam}_fwd" 240 "$fl_bin/fa-bench" --family "$fam" "${shape[@]}" --seqlen "$seqlens" \
    --launch-once --csv "alloc_${fam}_fwd.csv"
done
# The backward's device_bytes (forward + backward buffers) with its checks (edge problems, n <= 2048) and no
# timing: 21 timed runs at n 65536 (b 1, h 16) take ~100 s for fa2_sm80_bwd alone (4.8 s each at its 184
# TFLOP/s of 2026-11-29), more for fa1_bwd, for a table that reads no time.
for fam in fa1_bwd fa2_sm80_bwd; do
  fl_step "alloc_${fam}" 300 "$fl_bin/fa-bench" --family "$fam" --direction bwd "${shape[@]}" \
    --seqlen "$seqlens" --check-only --csv "alloc_${fam}.csv"
done
fl_step peers 300 python3 "$fl_here/../peers/peers.py" --bwd --memory-only --backends math,flash,cudnn \
  --dtype bf16 --head-dim "$d" --seqlen "$seqlens" --batch 1 --heads "$heads" --input-sets 1 --out peers.csv
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log" &&
  cat "$fl_work/table.md"
fl_sync
fl_plot
