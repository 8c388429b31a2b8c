#!/usr/bin/env bash
# clock_steps.sh: where a card's clock steps down under sustained load, and what that does to fa-tune's
# 30-run timings. On the H100 (2026-12-07, README.md) the power cap's first step came 16-67 ms into the timed
# runs and put a close call's pair -0.5% to 12.7% apart over four rounds; a 0.85 ms kernel timed 13-15%
# faster after 5 warm-up runs than settled for 200 ms. Five ROUNDS=1 alternate.sh commands, in this order:
#   1. the bf16 d256 full n 16384 close call (kBlockN 64 against 80), 300 runs: when the steps come;
#   2. the same, 30 runs after 5 warm-ups: fa-tune's protocol;
#   3. the same, 30 runs after --settle-ms 200;
#   4. bf16 d128 full n 4096 (kStages=2, 0.85 ms a run on the H100), 30 runs after 5 warm-ups;
#   5. the same after --settle-ms 200.
#   CARRY=$PWD/.carry/grid OUT=DIR bash experiments/card_transfer/clock_steps.sh
# Writes $OUT/clock-steps.tgz (one folder per command, labelled with the card: h200-runs300, ...) and prints
# each command's table. Each command has 60 s (TIMEOUT_S); about 2 minutes in all.
set -uo pipefail
if [ -z "${CARRY:-}" ] || [ -z "${OUT:-}" ] || [ $# -ne 0 ]; then
  echo "usage: CARRY=DIR OUT=DIR clock_steps.sh (no arguments)" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | grep -oE '[A-Z][0-9]{2,}' | head -n 1)
card=$(echo "${card:-gpu}" | tr '[:upper:]' '[:lower:]')
work=$(mktemp -d)
close_call="--family fa3_sm90 --dtype bf16 --head-dim 256 --seqlen 16384 --causal no --direction fwd"
short="--family fa3_sm90 --dtype bf16 --head-dim 128 --seqlen 4096 --causal no --direction fwd"
# The close call's two configs: the H200's seed (kBlockN 64) and the H100's pick (80), the rest shared.
shared=kConsumers=2,kIntraWgOverlap=1,kPersistent=1,kPingPong=1,kSeparateO=0,kStages=2,kTransposeV=0
pair=("kBlockN=64,$shared" "kBlockN=80,$shared")
status=0
step() {  # step LABEL RUNS "PROBLEM" CONFIG...
  local label=$card-$1 runs=$2 problem=$3
  shift 3
  OUT=$work ROUNDS=1 RUNS=$runs timeout -k 5 "${TIMEOUT_S:-60}" \
    bash "$here/alternate.sh" "$label" "$problem" "$@" >"$work/$label.log" 2>&1
  local rc=$?
  echo "## $label (rc $rc)"
  tar xzOf "$work/$label.tgz" "$label/table.md" 2>/dev/null || tail -n 5 "$work/$label.log"
  echo
  [ "$rc" = 0 ] || status=1
}
step runs300 300 "$close_call" "${pair[@]}"
step w5 30 "$close_call" "${pair[@]}"
step settle200 30 "$close_call --settle-ms 200" "${pair[@]}"
step d128-w5 30 "$short" kStages=2
step d128-settle200 30 "$short --settle-ms 200" kStages=2
tar czf "$OUT/clock-steps.tgz" -C "$work" .
exit $status
