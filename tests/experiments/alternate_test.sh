#!/usr/bin/env bash
# experiments/card_transfer/alternate.sh on stand-ins for fa-bench and nvidia-smi: every config of every
# round runs once, in turn, with its start and end in marks.txt; table.md holds each command's CSV row (or
# names the log of one that wrote none); the tarball comes back; bad usage is exit code 2.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/out"
# shellcheck source=card_stand_ins.sh
. "$(dirname "$0")/card_stand_ins.sh"
card_stand_ins "$work" "Stand-in GPU"
out=$(PATH=$work/path:$PATH CARRY=$work/carry OUT=$work/out ROUNDS=2 \
  bash "$repo/experiments/card_transfer/alternate.sh" probe "--family fa3_sm90 --head-dim 64" \
  kBlockN=64 kBlockN=0 2>&1)
status=0
fail() { echo "FAIL: $1"; echo "$out" | sed 's/^/    /'; status=1; }
configs=$(sed -E 's/.*--config ([^ ]*).*/\1/' "$work/carry/bin/calls" | tr '\n' ' ')
[ "$configs" = "kBlockN=64 kBlockN=0 kBlockN=64 kBlockN=0 " ] ||
  fail "the configs in turn, two rounds: $configs"
grep -q '^| 2 | c0 | 64.0 | 1.500 | 1.400-1.600 | true |$' <<<"$out" || fail "round 2's row of c0"
grep -q '^| 1 | c1 | no row: see 1-c1.log' <<<"$out" || fail "a command without a CSV names its log"
modes_row='^| 2-c0-runs.csv: fa3_sm90 bf16 full fwd n4096 d64 kBlockN=64 | 1 | 1.5000 (1) | one mode |'
grep -q "$modes_row" <<<"$out" || fail "run_modes.py's row of round 2's c0"
packed=$(tar tzf "$work/out/probe.tgz" 2>&1)
for f in marks.txt smi.csv table.md 2-c0.csv 2-c0-runs.csv 1-c1.log; do
  grep -q "probe/$f" <<<"$packed" || fail "probe.tgz lacks $f"
done
[ "$(tar xzOf "$work/out/probe.tgz" probe/marks.txt | grep -c ' start ')" = 4 ] ||
  fail "four starts in marks.txt"
bash "$repo/experiments/card_transfer/alternate.sh" probe >/dev/null 2>&1
[ $? = 2 ] || fail "bad usage should exit 2"
[ "$status" = 0 ] && echo "ok: alternate.sh"
exit $status
