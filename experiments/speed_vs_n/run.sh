#!/usr/bin/env bash
# speed_vs_n: forward and backward TFLOP/s against n, bf16, d 64/128, both masks: our naive, fa1, fa2_sm80,
# fa3_sm90 beside PyTorch's math (standard attention on cuBLAS), FlashAttention-2 and
# cuDNN backends, in one run. ~40 min of device time in all (experiments/PLAN.md): run it in pieces, one
# device call each, with the variables below (each step has its own timeout; rerun to resume):
#   CARRY=.carry/gpu bash experiments/speed_vs_n/run.sh        (from the repository root on the device)
# Environment: DTYPE (bf16), HEAD_DIMS ("64 128"), SEQLENS (512,...,16384: headline b = 16384/n,
#   h = 2048/d; empty: the long steps only), LONG_SEQLENS (32768,65536: batch 1, h = 2048/d; empty: no long
#   steps), NAIVE_MAX_N (16384: naive keeps n^2 S and P), FWD_FAMILIES ("naive fa1 fa2_sm80 fa3_sm90"),
#   BWD_FAMILIES ("fa1_bwd fa2_sm80_bwd"), PEERS (flash,cudnn,math; empty: no peers steps); an empty
#   FWD_FAMILIES or BWD_FAMILIES skips those. A family fa-bench does not know yet fails its step and the
#   rest runs. peers.py measures memory too (--memory: recomputation takes its d 128 rows from here).
set -uo pipefail
FL_COMMAND="$0${DTYPE:+ DTYPE=$DTYPE}${HEAD_DIMS:+ HEAD_DIMS=$HEAD_DIMS}${SEQLENS+ SEQLENS=$SEQLENS}\
${LONG_SEQLENS+ LONG_SEQLENS=$LONG_SEQLENS}${FWD_FAMILIES+ FWD_FAMILIES=$FWD_FAMILIES}\
${BWD_FAMILIES+ BWD_FAMILIES=$BWD_FAMILIES}${PEERS+ PEERS=$PEERS}"
source "$(dirname "$0")/../lib.sh"
fl_init speed_vs_n
dtype=${DTYPE:-bf16}
dims=${HEAD_DIMS:-64 128}
seqlens=${SEQLENS-512,1024,2048,4096,8192,16384}
long=${LONG_SEQLENS-32768,65536}
peers=${PEERS-flash,cudnn,math}
naive_max=${NAIVE_MAX_N:-16384}
upto() { tr , '\n' <<<"$1" | awk -v m="$2" '$1 <= m' | paste -sd, -; }
bench() {  # bench NAME TIMEOUT ARGS...: one fa-bench table, CSV beside its log
  local name=$1 limit=$2
  shift 2
  fl_step "$name" "$limit" "$fl_bin/fa-bench" --dtype "$dtype" --causal both --csv "$name.csv" "$@"
}
for d in $dims; do
  for fam in ${FWD_FAMILIES-naive fa1 fa2_sm80 fa3_sm90}; do
    n=$seqlens
    [ "$fam" = naive ] && n=$(upto "$seqlens" "$naive_max")
    [ -n "$n" ] &&
      bench "bench_${fam}_fwd_d$d" 240 --family "$fam" --direction fwd --head-dim "$d" --seqlen "$n"
    [ "$fam" = naive ] || [ -z "$long" ] && continue
    bench "bench_${fam}_fwd_d${d}_long" 180 --family "$fam" --direction fwd --head-dim "$d" --seqlen "$long" \
      --runs 20 --batch 1 --heads $((2048 / d))
  done
  for fam in ${BWD_FAMILIES-fa1_bwd fa2_sm80_bwd}; do
    [ -n "$seqlens" ] || continue
    bench "bench_${fam}_bwd_d$d" 300 --family "$fam" --direction bwd --head-dim "$d" --seqlen "$seqlens"
  done
done
# Peers steps per head dim, so that a call with HEAD_DIMS=64 after one with 128 runs its own.
if [ -n "$peers" ]; then
  for d in $dims; do
    [ -n "$seqlens" ] && fl_step "peers_d$d" 300 python3 "$fl_here/../peers/peers.py" --bwd --memory \
      --backends "$peers" --dtype "$dtype" --head-dim "$d" --seqlen "$seqlens" --out "peers_d$d.csv"
    [ -n "$long" ] && fl_step "peers_long_d$d" 240 python3 "$fl_here/../peers/peers.py" --bwd \
      --backends flash,cudnn --dtype "$dtype" --head-dim "$d" --seqlen "$long" --batch 1 --input-sets 2 \
      --out "peers_long_d$d.csv"
  done
fi
python3 "$fl_here/summarize.py" "$fl_work" >"$fl_work/table.md" 2>"$fl_work/summarize.log" &&
  cat "$fl_work/table.md"
fl_sync
fl_plot
