#!/usr/bin/env bash
# experiments/card_transfer/alternate.sh on stand-ins for fa-bench and nvidia-smi: every config of every
# round runs once, in turn, with its start and end in marks.txt; table.md holds each command's CSV row (or
# names the log of one that wrote none); the tarball comes back; bad usage is exit code 2.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/carry/bin" "$work/path" "$work/out"
# fa-bench: its --config noted; a CSV of one row whose TFLOP/s is the config's kBlockN and a --samples CSV
# of one run, none for 0.
cat >"$work/carry/bin/fa-bench" <<'STUB'
#!/usr/bin/env bash
while [ $# -gt 0 ]; do
  case $1 in --config) config=$2 ;; --csv) csv=$2 ;; --samples) runs=$2 ;; esac
  shift
done
echo "$config" >>"$(dirname "$0")/calls"
block=${config#kBlockN=}
[ "$block" = 0 ] && exit 1
printf 'family,config,median_ms,p20_ms,p80_ms,tflops,passed\nfa3_sm90,"%s",1.5,1.4,1.6,%s,true\n' \
  "$config" "$block" >"$csv"
printf '%s\n%s\n' "family,config,dtype,mask,direction,seqlen,head_dim,run,input_set,ms,ended_utc" \
  "fa3_sm90,\"$config\",bf16,full,fwd,4096,64,0,0,1.5,2026-12-07T21:40:01.000250Z" >"$runs"
STUB
cat >"$work/path/nvidia-smi" <<'STUB'
#!/usr/bin/env bash
case "$*" in
  *name,driver*) echo "Stand-in GPU, 1.0" ;;
  *) while echo "$(date -u '+%Y/%m/%d %H:%M:%S.%3N'), 1500 MHz, 2619 MHz, 300.0 W, 60"; do sleep 0.1; done ;;
esac
STUB
chmod +x "$work/carry/bin/fa-bench" "$work/path/nvidia-smi"
out=$(PATH=$work/path:$PATH CARRY=$work/carry OUT=$work/out ROUNDS=2 \
  bash "$repo/experiments/card_transfer/alternate.sh" probe "--family fa3_sm90 --head-dim 64" \
  kBlockN=64 kBlockN=0 2>&1)
status=0
fail() { echo "FAIL: $1"; echo "$out" | sed 's/^/    /'; status=1; }
[ "$(tr '\n' ' ' <"$work/carry/bin/calls")" = "kBlockN=64 kBlockN=0 kBlockN=64 kBlockN=0 " ] ||
  fail "the configs in turn, two rounds: $(tr '\n' ' ' <"$work/carry/bin/calls")"
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
