#!/usr/bin/env bash
# experiments/card_transfer/clock_steps.sh on stand-ins for fa-bench and nvidia-smi: the five commands in
# order, each with its problem, runs and settle; every table printed under the card's label; one tarball
# with each command's folder; bad usage is exit code 2.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
# shellcheck source=card_stand_ins.sh
. "$(dirname "$0")/card_stand_ins.sh"
card_stand_ins "$work" "NVIDIA H200"
out=$(PATH=$work/path:$PATH CARRY=$work/carry OUT=$work/out \
  bash "$repo/experiments/card_transfer/clock_steps.sh" 2>&1)
rc=$?
status=0
fail() { echo "FAIL: $1"; echo "$out" | sed 's/^/    /'; status=1; }
[ "$rc" = 0 ] || fail "exit code $rc"
mapfile -t calls <"$work/carry/bin/calls"
[ "${#calls[@]}" = 8 ] || fail "8 fa-bench commands (2+2+2+1+1), got ${#calls[@]}"
# call index: what its command line must hold, and must not.
expect() {
  local i=$1 has=$2 lacks=${3:-}
  [[ " ${calls[$i]} " == *" $has "* ]] || fail "command $((i + 1)) lacks '$has': ${calls[$i]}"
  [ -z "$lacks" ] || [[ " ${calls[$i]} " != *" $lacks "* ]] || fail "command $((i + 1)) has '$lacks'"
}
expect 0 "--runs 300" "--settle-ms"
expect 0 "--head-dim 256 --seqlen 16384"
shared=kConsumers=2,kIntraWgOverlap=1,kPersistent=1,kPingPong=1,kSeparateO=0,kStages=2,kTransposeV=0
expect 0 "--config kBlockN=64,$shared"
expect 1 "--config kBlockN=80,$shared"
expect 2 "--runs 30" "--settle-ms"
expect 4 "--settle-ms 200"
expect 5 "--settle-ms 200"
expect 6 "--head-dim 128 --seqlen 4096" "--settle-ms"
expect 6 "--config kStages=2"
expect 7 "--settle-ms 200"
# Listed once: `tar | grep -q` under pipefail fails when grep's early exit kills tar with SIGPIPE.
packed=$(tar tzf "$work/out/clock-steps.tgz" 2>&1)
for label in runs300 w5 settle200 d128-w5 d128-settle200; do
  grep -q "^## h200-$label (rc 0)$" <<<"$out" || fail "the heading of h200-$label"
  grep -q "h200-$label.tgz" <<<"$packed" || fail "clock-steps.tgz lacks h200-$label.tgz"
done
grep -q '^| 1 | c1 | 80.0 | 1.500 | 1.400-1.600 | true |$' <<<"$out" || fail "a table's row (kBlockN 80)"
grep -q '^| 1 | c0 | 600.0 | 1.500 | 1.400-1.600 | true |$' <<<"$out" || fail "a table's row (kStages=2)"
OUT=$work/out bash "$repo/experiments/card_transfer/clock_steps.sh" >/dev/null 2>&1
[ $? = 2 ] || fail "no CARRY should exit 2"
[ "$status" = 0 ] && echo "ok: clock_steps.sh"
exit $status
