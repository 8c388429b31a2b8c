#!/usr/bin/env bash
# scripts/gpu/tests.sh without a GPU: a fake Catch2 binary lists [gpu] cases (one fa3_sm90 forward case, whose
# name starts "fa3_sm90 ", one with a comma and brackets, one that fails) and the recipe must run every one
# of them, fa3_sm90's forward case last, each by its escaped name, and count the failure. Until 2026-12-01
# the recipe's reordering dropped every fa3_sm90 forward case without a word.
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; [ -f "$work/run.log" ] && cat "$work/run.log"; exit 1; }
mkdir -p "$work/carry/bin" "$work/carry/kernels_src" "$work/path"
printf '#!/usr/bin/env bash\necho "NVIDIA H200 (fake), 580.00"\n' >"$work/path/nvidia-smi"
cat >"$work/carry/bin/test_fake" <<'FAKE'
#!/usr/bin/env bash
# A Catch2 stand-in: "[gpu] --list-test-names-only" lists; a spec runs that case (the spec arrives escaped).
if [ "$2" = --list-test-names-only ]; then
  printf '  fa3_sm90 defaults are correct\n  a case, with [brackets]\n  a failing case\n\n'
  exit 0
fi
echo "$1" >>"$(dirname "$0")/ran.txt"
case "$1" in
  "a failing case") echo "Failed 1 test case"; exit 4 ;;
  *) echo "Passed 1 test case" ;;
esac
FAKE
printf '#!/usr/bin/env bash\nexit 0\n' >"$work/carry/bin/fa-bench"
chmod +x "$work/path/nvidia-smi" "$work/carry/bin/test_fake" "$work/carry/bin/fa-bench"
(cd "$repo" && PATH="$work/path:$PATH" CARRY="$work/carry" OUT="$work/out" TESTS_CPU=0 TESTS_PARALLEL=1 \
  TESTS_BUDGET_S=60 bash scripts/gpu.sh tests) >"$work/run.log" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "exit $rc, expected 1 (one case failed)"
ran=$work/carry/bin/ran.txt
[ "$(wc -l <"$ran")" = 3 ] || fail "ran $(wc -l <"$ran") cases, expected 3"
[ "$(tail -n 1 "$ran")" = "fa3_sm90 defaults are correct" ] || fail "fa3_sm90's forward case did not run last"
grep -qxF 'a case\, with \[brackets]' "$ran" || fail "the comma and bracket were not escaped"
grep -q "tests: 1 run(s) failed or not run" "$work/run.log" || fail "the failure was not counted"
echo "PASS"
