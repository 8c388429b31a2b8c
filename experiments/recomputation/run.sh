#!/usr/bin/env bash
# recomputation: the backward with stored P (standard attention: PyTorch's math path keeps S and P for the
# backward) against the backward that recomputes P from Q, K and the LSE (fa2_sm80_bwd and fa1_bwd, PyTorch's
# FlashAttention-2 and cuDNN): time and memory against n. bf16, d = 128, non-causal, headline shapes
# (b = 16384/n, h = 16). ~4 min of device time alone; ~0 after speed_vs_n's d 128 steps on the same machine,
# whose rows are the same measurements (fl_reuse takes them: the same binaries, commands and shapes):
#   CARRY=.carry/gpu bash experiments/recomputation/run.sh
# Environment: SEQLENS (1024,...,16384).
set -uo pipefail
FL_COMMAND="$0${SEQLENS:+ SEQLENS=$SEQLENS}"
source "$(dirname "$0")/../lib.sh"
fl_init recomputation
seqlens=${SEQLENS:-1024,2048,4096,8192,16384}
shape=(--dtype bf16 --head-dim 128 --causal no --seqlen "$seqlens")
rows=(dtype=bf16 mask=full seqlen="$seqlens")
# The forward it recomputes, timed beside the backward: bwd / fwd time is the price of recomputation.
fl_reuse bench_fa2_sm80_fwd speed_vs_n bench_fa2_sm80_fwd_d128 "${rows[@]}" ||
  fl_step bench_fa2_sm80_fwd 240 "$fl_bin/fa-bench" --family fa2_sm80 "${shape[@]}" \
    --csv bench_fa2_sm80_fwd.csv
for fam in fa2_sm80_bwd fa1_bwd; do
  fl_reuse "bench_${fam}" speed_vs_n "bench_${fam}_bwd_d128" "${rows[@]}" ||
    fl_step "bench_${fam}" 300 "$fl_bin/fa-bench" --family "$fam" --direction bwd "${shape[@]}" \
      --csv "bench_${fam}.csv"
done
# speed_vs_n's peers steps measure memory too (--memory), both masks.
fl_reuse peers speed_vs_n peers_d128 dtype=bf16 seqlen="$seqlens" ||
  fl_step peers 480 python3 "$fl_here/../peers/peers.py" --bwd --memory --backends math,flash,cudnn \
    --dtype bf16 --head-dim 128 --seqlen "$seqlens" --input-sets 2 --out peers.csv
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log" &&
  cat "$fl_work/table.md"
fl_sync
fl_plot
