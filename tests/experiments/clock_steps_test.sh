#!/usr/bin/env bash
# experiments/card_transfer/clock_steps.sh on stand-ins for fa-bench and nvidia-smi: the five commands in
# order, each with its problem, runs and settle; every table printed under the card's label; one tarball
# with each command's folder; bad usage is exit code 2.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/carry/bin" "$work/path" "$work/out"
# fa-bench: its arguments noted, one line a call; a CSV row and a --samples CSV of one run.
cat >"$work/carry/bin/fa-bench" <<'STUB'
#!/usr/bin/env bash
echo "$*" >>"$(dirname "$0")/calls"
while [ $# -gt 0 ]; do
  case $1 in --config) config=$2 ;; --csv) csv=$2 ;; --samples) runs=$2 ;; esac
  shift
done
printf 'family,config,median_ms,p20_ms,p80_ms,tflops,passed\nfa3_sm90,"%s",1.5,1.4,1.6,600,true\n' \
  "$config" >"$csv"
printf '%s\n%s\n' "family,config,dtype,mask,direction,seqlen,head_dim,run,input_set,ms,ended_utc" \
  "fa3_sm90,\"$config\",bf16,full,fwd,4096,64,0,0,1.5,2026-12-08T01:40:01.000250Z" >"$runs"
STUB
cat >"$work/path/nvidia-smi" <<'STUB'
#!/usr/bin/env bash
case "$*" in
  *name,driver*) echo "NVIDIA H200, 580.159.04" ;;
  *name*) echo "NVIDIA H200" ;;
  *) while echo "$(date -u '+%Y/%m/%d %H:%M:%S.%3N'), 1980 MHz, 3201 MHz, 500.0 W, 50"; do sleep 0.1; done ;;
esac
STUB
chmod +x "$work/carry/bin/fa-bench" "$work/path/nvidia-smi"
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
for label in runs300 w5 settle200 d128-w5 d128-settle200; do
  grep -q "^## h200-$label (rc 0)$" <<<"$out" || fail "the heading of h200-$label"
  tar tzf "$work/out/clock-steps.tgz" | grep -q "h200-$label.tgz" ||
    fail "clock-steps.tgz lacks h200-$label.tgz"
done
grep -q '^| 1 | c1 | 600.0 | 1.500 | 1.400-1.600 | true |$' <<<"$out" || fail "a table's row"
OUT=$work/out bash "$repo/experiments/card_transfer/clock_steps.sh" >/dev/null 2>&1
[ $? = 2 ] || fail "no CARRY should exit 2"
[ "$status" = 0 ] && echo "ok: clock_steps.sh"
exit $status
