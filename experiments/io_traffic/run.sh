#!/usr/bin/env bash
# io_traffic: DRAM bytes of one forward against n (ncu, --clock-control none: the GPU's own clocks, as timed
# runs see them) for naive, fa1, fa2_sm80 (and fa3_sm90 once it exists), beside the analytical model
# (model.py), and the roofline with this GPU's measured ceilings (ceilings.py: copy bandwidth, bf16 GEMM).
# bf16, d = 128, non-causal, headline shapes (b = 16384/n, h = 16). One device call, ~6 min (~8 without
# speed_vs_n's d 128 forwards on the same machine, whose timings fl_reuse takes):
#   CARRY=.carry/gpu bash experiments/io_traffic/run.sh
# Environment: SEQLENS ("1024 2048 4096 8192 16384"), FAMILIES ("naive fa1 fa2_sm80 fa3_sm90"),
#   NCU_TIMEOUT (150 s per profiled forward), FA1_NCU_MAX_N (4096: fa1 launches one kernel per key block, n/32
#   of them, 512 at n 16384, and ncu profiles each one: its slowest steps; its reads matched model.py within
#   2% at n 1024 and 16384 on 2026-11-29 (results/2026-11-29/traffic.csv), so n 8192 and 16384 are left to
#   that run and the model; FA1_NCU_MAX_N=16384 profiles them again).
set -uo pipefail
FL_COMMAND="$0${SEQLENS:+ SEQLENS=$SEQLENS}${FAMILIES:+ FAMILIES=$FAMILIES}"
source "$(dirname "$0")/../lib.sh"
fl_init io_traffic
seqlens=${SEQLENS:-1024 2048 4096 8192 16384}
families=${FAMILIES:-naive fa1 fa2_sm80 fa3_sm90}
shape=(--dtype bf16 --head-dim 128 --causal no)
fl_step ceilings 120 python3 "$fl_here/ceilings.py" --out ceilings.csv
for fam in $families; do
  for n in $seqlens; do
    [ "$fam" = fa1 ] && [ "$n" -gt "${FA1_NCU_MAX_N:-4096}" ] && continue
    # ncu counts dram__bytes_read/write of every kernel of exactly one launch sequence (--launch-once: no
    # checks, no timing); the sum over the sequence is one forward's traffic.
    fl_step "ncu_${fam}_n$n" "${NCU_TIMEOUT:-150}" ncu --clock-control none --print-units base --csv \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      "$fl_bin/fa-bench" --family "$fam" "${shape[@]}" --seqlen "$n" --launch-once \
      --csv "alloc_${fam}_n$n.csv"
  done
  # The same forward timed (for the roofline's achieved FLOP/s): speed_vs_n's rows when it ran here.
  fl_reuse "time_$fam" speed_vs_n "bench_${fam}_fwd_d128" dtype=bf16 mask=full \
    seqlen="$(tr ' ' , <<<"$seqlens")" ||
    fl_step "time_$fam" 240 "$fl_bin/fa-bench" --family "$fam" "${shape[@]}" \
    --seqlen "$(tr ' ' , <<<"$seqlens")" --runs 20 --csv "time_$fam.csv"
done
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log" &&
  cat "$fl_work/table.md"
fl_sync
fl_plot
