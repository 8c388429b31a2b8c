#!/usr/bin/env bash
# decode: a few query rows against long KV caches. Our split-KV family flash_decode (Flash-Decoding) beside
# fa2_sm80, fa3_sm90 and PyTorch's FlashAttention-2, cuDNN and math backends (decode.py), with this GPU's
# copy bandwidth (io_traffic/ceilings.py) as the ceiling, and flash_decode's split count swept at one shape.
# ~10 min of device time with both shapes (experiments/PLAN.md runs one shape per call):
#   bash scripts/gpu.sh experiment decode   (or CARRY=.carry/gpu bash experiments/decode/run.sh)
# Environment: SHAPES ("1:16:16 1:32:8": batch:heads:kv_heads, the second GQA 4; set and empty: the sweep
#   only), NQ (1,4,16), FA_NQ (1,16: fa2_sm80 and fa3_sm90 at these n_q only; their grid, one CTA per (head,
#   query block of >= 64 rows), and so their time are the same for every n_q <= 16), NK (4096,16384,65536,
#   131072), SWEEP (yes; no skips the split sweep), SWEEP_SHAPE ("1:32:8:1:32768": b:h:h_kv:n_q:n_k), bf16,
#   d 128, no mask.
set -uo pipefail
FL_COMMAND="$0${SHAPES+ SHAPES=$SHAPES}${NQ:+ NQ=$NQ}${FA_NQ:+ FA_NQ=$FA_NQ}${NK:+ NK=$NK}\
${SWEEP:+ SWEEP=$SWEEP}"
source "$(dirname "$0")/../lib.sh"
fl_init decode
nq_list=${NQ:-1,4,16}
nk_list=${NK:-4096,16384,65536,131072}
common=(--dtype bf16 --head-dim 128 --causal no)
fl_step ceilings 120 python3 "$fl_here/../io_traffic/ceilings.py" --out ceilings.csv
for shape in ${SHAPES-1:16:16 1:32:8}; do
  IFS=: read -r b h hkv <<<"$shape"
  tag="b${b}_h${h}_kv${hkv}"
  fl_step "peers_$tag" 300 python3 "$fl_here/decode.py" --batch "$b" --heads "$h" --heads-kv "$hkv" \
    --nq "$nq_list" --nk "$nk_list" --out "peers_$tag.csv"
  for nq in ${nq_list//,/ }; do
    shape_args=(--batch "$b" --heads "$h" --heads-kv "$hkv" --seqlen-q "$nq")
    # One CTA per (query block, head): the grid decode leaves idle. Their configs do not depend on n_k.
    [[ ",${FA_NQ:-1,16}," == *",$nq,"* ]] &&
    for fam in fa2_sm80 fa3_sm90; do
      fl_step "bench_${fam}_${tag}_nq$nq" 240 "$fl_bin/fa-bench" --family "$fam" "${common[@]}" \
        "${shape_args[@]}" --seqlen "$nk_list" --csv "bench_${fam}_${tag}_nq$nq.csv"
    done
    # flash_decode's default split count depends on n_k: one call per cache length.
    for nk in ${nk_list//,/ }; do
      fl_step "bench_flash_decode_${tag}_nq${nq}_nk$nk" 120 "$fl_bin/fa-bench" --family flash_decode \
        "${common[@]}" "${shape_args[@]}" --seqlen "$nk" --csv "bench_flash_decode_${tag}_nq${nq}_nk$nk.csv"
    done
  done
done
# The split count at one shape: kSplits = 1 is FlashAttention's grid (one CTA per (kv head, row block)).
IFS=: read -r b h hkv nq nk <<<"${SWEEP_SHAPE:-1:32:8:1:32768}"
[ "${SWEEP:-yes}" = yes ] &&
for splits in 1 2 4 8 16 32 64 128; do
  fl_step "sweep_splits$splits" 120 "$fl_bin/fa-bench" --family flash_decode "${common[@]}" --batch "$b" \
    --heads "$h" --heads-kv "$hkv" --seqlen-q "$nq" --seqlen "$nk" --config "kSplits=$splits" \
    --csv "sweep_splits$splits.csv"
done
fl_step merge 60 python3 "$fl_here/merge.py" .
fl_sync
fl_plot
