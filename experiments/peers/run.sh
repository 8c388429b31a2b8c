#!/usr/bin/env bash
# Our best kernels beside PyTorch's FlashAttention-2 and cuDNN backends, in ONE device run, and the dated
# table of TFLOP/s and ratios (issue 5, items 7-8). Device call, from the repository root with .carry/gpu
# carried (scripts/build-portable.sh):  bash scripts/gpu.sh peers
# Environment (all optional): DTYPES (bf16,fp16), HEAD_DIMS (64,128), SEQLENS (1024,...,16384),
#   DIRECTIONS ("fwd bwd"), FWD_FAMILY (fa2_sm80), BWD_FAMILY (fa2_sm80_bwd), FWD_CONFIG / BWD_CONFIG
#   (a --config for fa-bench; unset: each problem's family default, the best measured config), SETTLE_MS
#   (0: untimed calls for this long after the warm-ups, on both sides: fa-bench's and peers.py's
#   --settle-ms, so that both are timed at the power cap's settled clock; experiments/card_transfer).
# Protocol (both sides): headline shapes b = 16384/n, h = 2048/d; CUDA events around the kernels only,
# warm-up, median of 30 with p20/p80, input sets rotated past the L2; TFLOP/s by the FlashAttention
# convention. Ours are checked against the float64 reference before they are timed (fa-bench).
set -uo pipefail
here=${CARRY:?run through scripts/gpu.sh (CARRY: the carried bin/ and kernels_src/)}
scripts=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}/peers
mkdir -p "$out"
dtypes=${DTYPES:-bf16,fp16}
dims=${HEAD_DIMS:-64,128}
seqlens=${SEQLENS:-1024,2048,4096,8192,16384}
directions=${DIRECTIONS:-fwd bwd}
settle_ms=${SETTLE_MS:-0}
settle=()  # passed only when set, so that a carry built before fa-bench had --settle-ms still runs the rest
[ "$settle_ms" != 0 ] && settle=(--settle-ms "$settle_ms")
{
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
  echo "command: DTYPES=$dtypes HEAD_DIMS=$dims SEQLENS=$seqlens DIRECTIONS=\"$directions\" \
SETTLE_MS=$settle_ms bash scripts/gpu.sh peers"
} | tee "$out/header.txt"
for dir in $directions; do
  if [ "$dir" = fwd ]; then fam=${FWD_FAMILY:-fa2_sm80} cfg=${FWD_CONFIG:-}; \
    else fam=${BWD_FAMILY:-fa2_sm80_bwd} cfg=${BWD_CONFIG:-}; fi
  "$here/bin/fa-bench" --family "$fam" --direction "$dir" --dtype "$dtypes" --head-dim "$dims" \
    --seqlen "$seqlens" --causal both ${cfg:+--config "$cfg"} "${settle[@]}" \
    --csv "$out/bench_${fam}_${dir}.csv" >"$out/bench_${fam}_${dir}.txt" 2>&1
  echo "fa-bench $fam $dir rc=$? ($(tail -n 1 "$out/bench_${fam}_${dir}.txt"))"
done
bwd_flag=""; [[ " $directions " == *" bwd "* ]] && bwd_flag=--bwd
python3 "$scripts/peers.py" $bwd_flag --dtype "$dtypes" --head-dim "$dims" --seqlen "$seqlens" \
  "${settle[@]}" --out "$out/peers.csv" >"$out/peers.txt" 2>&1
echo "peers.py rc=$?"
{ cat "$out/header.txt"; echo; python3 "$scripts/compare.py" "$out"; } >"$out/table.md"
cat "$out/table.md"
