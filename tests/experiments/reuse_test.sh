#!/usr/bin/env bash
# fl_reuse (experiments/lib.sh) and reuse_rows.py: another question's finished step on this machine gives
# this step its matching rows (the '#' lines kept, the summary saying "reused"); an unfinished step (no
# .done) or one without such rows leaves the caller to run its own; a step done earlier is not redone; the
# tarball packed after each step leaves the work folder's databases out.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/experiments/q" "$work/flwork/other"
cp "$repo/experiments/lib.sh" "$repo/experiments/reuse_rows.py" "$work/experiments/"
{
  echo "# Mock GPU 2026-12-01"
  cat "$repo/tests/experiments/data/recomputation/bench_fa2_sm80_bwd.csv"
  sed -n 2p "$repo/tests/experiments/data/recomputation/bench_fa2_sm80_bwd.csv" | sed 's/,full,/,causal,/'
} >"$work/flwork/other/bench.csv"
cat >"$work/experiments/q/run.sh" <<'EOF'
source "$(dirname "$0")/../lib.sh"
fl_init q
touch "$fl_work/tune.sqlite" "$fl_work/tune.sqlite-wal"
say() { if "$@"; then echo "RESULT reused"; else echo "RESULT ran"; fi; }
say fl_reuse a other bench mask=full
touch "$(dirname "$fl_work")/other/bench.done"
say fl_reuse b other bench mask=full seqlen=1024,4096
say fl_reuse c other bench mask=sliding
say fl_reuse d other nothing mask=full
say fl_reuse b other bench mask=full
EOF
out=$(FL_WORK=$work/flwork OUT=$work/out FL_COMMAND=test bash "$work/experiments/q/run.sh" 2>&1)
status=0
expect() {  # expect WHAT PATTERN: PATTERN (grep -E) must be in the output
  grep -qE "$2" <<<"$out" || { echo "FAIL: $1 (no /$2/ in:)"; echo "$out" | sed 's/^/    /'; status=1; }
}
[ "$(grep -c '^RESULT' <<<"$out")" = 5 ] || { echo "FAIL: five answers expected"; echo "$out"; status=1; }
[ "$(grep '^RESULT' <<<"$out" | tr '\n' ' ')" \
  = "RESULT ran RESULT reused RESULT ran RESULT ran RESULT reused " ] ||
  { echo "FAIL: answers $(grep '^RESULT' <<<"$out" | tr '\n' ' ')"; status=1; }
expect "the summary names the source" \
  "step b: reused other/bench.csv \(mask=full seqlen=1024,4096\): 2 rows of bench.csv"
expect "a step done earlier is not redone" "step b: done earlier"
b=$work/flwork/q/b.csv
[ "$(head -n 1 "$b")" = "# Mock GPU 2026-12-01" ] || { echo "FAIL: the '#' line is not kept"; status=1; }
[ "$(grep -c ',full,' "$b")" = 2 ] && ! grep -q ',causal,' "$b" && ! grep -q ',2048,' "$b" ||
  { echo "FAIL: b.csv rows:"; cat "$b"; status=1; }
[ -f "$work/flwork/q/a.csv" ] && { echo "FAIL: an unfinished step was reused"; status=1; }
[ -f "$work/flwork/q/c.csv" ] && { echo "FAIL: no matching rows, yet c.csv was written"; status=1; }
[ -f "$work/out/q.tgz" ] || { echo "FAIL: the reuse was not packed into \$OUT"; status=1; }
packed=$(tar tzf "$work/out/q.tgz")
grep -q 'q/b.csv' <<<"$packed" && ! grep -q 'sqlite' <<<"$packed" ||
  { echo "FAIL: the tarball should hold b.csv and no database:"; echo "$packed"; status=1; }
[ "$status" = 0 ] && echo "ok: fl_reuse"
exit $status
