#!/usr/bin/env bash
# scripts/gpu/grid.sh without a GPU: `bash scripts/gpu.sh grid` answered from the recorded H200 run
# (GRID_REPLAY), over three device calls as the lead makes them, with experiments/tuner/ship_grid.py between
# them: (1) a fresh database, a budget of 10; the database and the winner come back, are carried and
# shipped; (2) the carried database with a budget of 30: the 10 are answered from it and 20 measured;
# (3) a call with no time left: every line "not reached", the database still comes back whole, and another
# card's export ships beside the seed's rows, not over them; (4) the same
# on two worker processes (GRID_GPUS); (5-7) the time split over two lines, ordered and even, and a bad
# GRID_SPLIT refused; (8) a GPU other than GRID_GPU refused.
# Usage: tests/scripts/grid_recipe_test.sh BUILD_BIN FIXTURE_TSV
set -uo pipefail
build_bin=$(cd "${1:?BUILD_BIN}" && pwd)
fixture=${2:?FIXTURE_TSV}
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

carry=$work/carry
mkdir -p "$carry/bin" "$work/path"
for exe in fa-tune fa-bench fa-compile-worker; do ln -s "$build_bin/$exe" "$carry/bin/$exe"; done
ln -s "$repo/kernels_src" "$carry/kernels_src"
printf '#!/usr/bin/env bash\necho "NVIDIA H200 (fake), 580.00"\n' >"$work/path/nvidia-smi"
chmod +x "$work/path/nvidia-smi"
# The shipped header and its first row (the counts below stay the same however many rows are shipped).
grep -v "^#" "$repo/db/seed/best_configs.tsv" | head -n 2 >"$work/seed.tsv"
problem="--family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 4096 --causal no --strategy bayes"

call() {  # call N LIST_TEXT BUDGET_S: one device call's recipe, $OUT = $work/out<N>
  local out=$work/out$1
  mkdir -p "$out"
  printf '# a comment line\n\n%s\n' "$2" >"$work/list$1.txt"
  (cd "$repo" && PATH="$work/path:$PATH" CARRY="$carry" OUT="$out" GRID_REPLAY="$fixture" \
    GRID_GPUS="${GRID_GPUS:-}" GRID_SPLIT="${GRID_SPLIT:-ordered}" GRID_GPU="${GRID_GPU:-}" \
    GRID_LIST="$work/list$1.txt" GRID_BUDGET_S="$3" GRID_DB="$work/carried.sqlite" \
    bash scripts/gpu.sh grid) >"$work/call$1.log" 2>&1
  echo $? >"$work/call$1.rc"
  mkdir -p "$out/unpacked"
  [ -f "$out/grid.tgz" ] && tar xzf "$out/grid.tgz" -C "$out/unpacked"
  [ -d "$out/grid" ] && cp -r "$out/grid" "$out/unpacked/"
}
json_field() {  # json_field FILE KEY: results[0][KEY]
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0][sys.argv[2]])' "$1" "$2"
}
expect_rc() {  # expect_rc N CODE: call N exited with CODE (else its log is shown)
  local rc
  rc=$(cat "$work/call$1.rc")
  [ "$rc" = "$2" ] || { cat "$work/call$1.log"; fail "call $1 exit $rc, not $2"; }
}
expect() {  # expect FILE PATTERN WHY: a line of FILE matches PATTERN (else FILE is shown and WHY said)
  grep -q -- "$2" "$1" || { cat "$1"; fail "$3"; }
}
ship() {  # ship FILES_AT [OPTION...]: ship_grid.py into the test's seed and raw folder; output in ship.log
  local files_at=$1
  shift
  python3 "$repo/experiments/tuner/ship_grid.py" "$files_at" --seed "$work/seed.tsv" --raw "$work/raw" \
    --carry "${SHIP_CARRY:-$work/carried.sqlite}" "$@" >"$work/ship.log" 2>&1
}
shipped() {  # shipped WHY FILES_AT [OPTION...]: ship, which must succeed (else its output is shown)
  local why=$1
  shift
  ship "$@" || { cat "$work/ship.log"; fail "$why"; }
}

GRID_GPU=H200 call 1 "$problem --budget 10" 60
expect_rc 1 0
expect "$work/call1.log" "grid: no $work/carried.sqlite: a fresh database" "call 1 did not start fresh"
for f in fa-tune.sqlite grid_best_configs.tsv; do
  [ -s "$work/out1/$f" ] || fail "call 1 brought no $f back"
done
[ "$(json_field "$work/out1/unpacked/grid/line1.json" measured)" = 10 ] || fail "call 1 did not measure 10"
expect "$work/out1/grid_best_configs.tsv" "^# .*scripts/gpu.sh grid (GRID_LIST=" "no provenance line"
expect "$work/out1/grid_best_configs.tsv" "^#   $problem --budget 10" "the command is not in the provenance"
[ "$(grep -c "^replay of " "$work/out1/grid_best_configs.tsv")" = 1 ] || fail "not one best config exported"

# Between the calls: a replay's rows are refused as seeds, then allowed for this test.
ship "$work/out1"
[ $? = 2 ] || fail "ship_grid.py shipped a replay's rows"
expect "$work/ship.log" "rows measured by a replay" "ship_grid.py did not say why it refused"
shipped "ship" "$work/out1" --allow-replay
raw=$(ls -d "$work"/raw/*-grid-* 2>/dev/null | head -n 1)
for f in grid.summary.txt grid_best_configs.tsv grid.tgz; do
  [ -s "$raw/$f" ] || fail "ship_grid.py kept no raw $f"
done
expect "$work/ship.log" "1 rows from the grid (0 replaced, 1 new), 2 in all" "seed merge"
[ -s "$work/carried.sqlite" ] || fail "the database was not put where the next call carries it from"
"$build_bin/fa-tune" --help >/dev/null  # the shipped seed still parses: fa-tune reads the same format
expect "$work/seed.tsv" "^# .*scripts/gpu.sh grid" "the provenance did not reach the seed file"

# Older raw databases: one the next call's database holds whole (removed by ship 2), one with a measurement
# it lacks (kept).
mkdir -p "$work/raw/2000-01-01-grid-000000Z" "$work/raw/2000-01-02-grid-000000Z"
cp "$raw/fa-tune.sqlite" "$work/raw/2000-01-01-grid-000000Z/fa-tune.sqlite"
cp "$raw/fa-tune.sqlite" "$work/raw/2000-01-02-grid-000000Z/fa-tune.sqlite"
python3 - "$work/raw/2000-01-02-grid-000000Z/fa-tune.sqlite" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
con.execute("UPDATE measurements SET config = config || ',kNeverMeasured=1' WHERE measurement_id = "
            "(SELECT min(measurement_id) FROM measurements)")
con.commit()
PY

call 2 "$problem --budget 30" 60
expect_rc 2 0
expect "$work/call2.log" "grid: resuming from $work/carried.sqlite" "call 2 did not resume"
line1=$work/out2/unpacked/grid/line1.json
[ "$(json_field "$line1" resumed)" = 10 ] || fail "call 2 did not answer the 10 from the database"
[ "$(json_field "$line1" measured)" = 20 ] || fail "call 2 did not measure 20 more"
shipped "ship 2" "$work/out2" --allow-replay
expect "$work/ship.log" "1 rows from the grid (1 replaced, 0 new), 2 in all" "seed replace"
held_whole=$work/raw/2000-01-01-grid-000000Z/fa-tune.sqlite
with_its_own=$work/raw/2000-01-02-grid-000000Z/fa-tune.sqlite
[ -e "$held_whole" ] && fail "a raw database the newest holds whole was kept"
[ -s "$with_its_own" ] || fail "a raw database with a measurement of its own was removed"
expect "$work/ship.log" "older fa-tune.sqlite removed" "the removal was not said"
# A shipped row faster than the grid's, with another config (a tuned winner beside a fresh database's
# default), stays; the same config re-measured slower replaces it (above: call 2's row replaced call 1's).
python3 - "$work/seed.tsv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
header = next(l for l in lines if not l.startswith("#")).split("\t")
for i, l in enumerate(lines):
    f = l.split("\t")
    if f[0].startswith("replay of "):
        f[header.index("config")] = "kBlockM=64,kShippedByHand=1"
        f[header.index("tflops")] = "99999"
        lines[i] = "\t".join(f)
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
shipped "ship 2 again" "$work/out2" --allow-replay
expect "$work/ship.log" \
  "1 rows from the grid (0 replaced, 0 new, 1 kept: the shipped config is faster), 2 in all" \
  "a faster shipped row was replaced"
expect "$work/seed.tsv" "kShippedByHand=1" "the faster shipped row is gone"
[ -s "$(ls -d "$work"/raw/*-grid-* | tail -n 1)/fa-tune.sqlite" ] || fail "ship_grid.py kept no raw database"

call 3 "$problem --budget 40
$problem --budget 40 --causal yes" 0
expect_rc 3 0
[ "$(grep -c "not reached (the call's 0 s are spent" "$work/call3.log")" = 2 ] ||
  fail "call 3: lines not 'not reached'"
expect "$work/call3.log" "30 measurements imported" "call 3 lost measurements"
shipped "ship 3" "$work/out3" --allow-replay
expect "$work/ship.log" "0 rows from the grid (0 replaced, 0 new), 2 in all" "ship 3 counts"
# A grid of another card (an H100's, GRID_GPU=H100) ships beside the H200's rows, never over them: the seed
# keys rows by GPU, as the database does (fa-tune --measured-on then picks one card's answers).
mkdir -p "$work/other_card"
cp "$work/carried.sqlite" "$work/other_card/fa-tune.sqlite"
python3 - "$work/out2/grid_best_configs.tsv" "$work/other_card/grid_best_configs.tsv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
out = [l if l.startswith("#") or not l.startswith("replay of ") else "NVIDIA H100 (fake)" + l[l.index("\t"):]
       for l in lines]
open(sys.argv[2], "w").write("\n".join(out) + "\n")
PY
SHIP_CARRY=$work/carried_other.sqlite shipped "ship other card" "$work/other_card"
expect "$work/ship.log" "1 rows from the grid (0 replaced, 1 new), 3 in all" \
  "another card's row replaced the H200's"
expect "$work/seed.tsv" "kShippedByHand=1" "another card's row removed a shipped row"
# (4) the same grid on two workers (GRID_GPUS, as on a multi-GPU kind): the coordinator exports the winner.
GRID_GPUS=0,1 call 4 "$problem --budget 40" 60
expect_rc 4 0
expect "$work/out4/unpacked/grid/line1.txt" "--gpus: 2 worker(s)" "call 4 did not run two workers"
[ "$(grep -c "^replay of " "$work/out4/grid_best_configs.tsv")" = 1 ] || fail "call 4 exported no winner"
# (5) two lines, each time split: ordered (the default) gives line 1 all 60 s, even half of them.
call 5 "$problem --budget 5
$problem --budget 5 --causal yes" 60
expect "$work/call5.log" "line 1 rc=0 in [0-9]* s (share 60 s)" "call 5: line 1 did not get the whole 60 s"
GRID_SPLIT=even call 6 "$problem --budget 5
$problem --budget 5 --causal yes" 60
expect "$work/call6.log" "line 1 rc=0 in [0-9]* s (share 30 s)" "call 6: not split evenly"
GRID_SPLIT=fair call 7 "$problem --budget 5" 60
[ "$(cat "$work/call7.rc")" = 2 ] && grep -q "GRID_SPLIT 'fair' is not ordered or even" "$work/call7.log" ||
  fail "call 7: a bad GRID_SPLIT was not refused with exit 2"
# (8) GRID_GPU names another GPU than the one present (the fake says H200): exit 3, one line, nothing tuned.
GRID_GPU=H100 call 8 "$problem --budget 5" 60
expect_rc 8 3
expect "$work/call8.log" "grid: the GPU is 'NVIDIA H200 (fake)', not GRID_GPU=H100: nothing tuned" \
  "call 8: no line saying why"
[ -e "$work/out8/fa-tune.sqlite" ] && fail "call 8 tuned on the wrong GPU"
echo "grid recipe: 8 calls, resumed, shipped, two workers, ordered and even splits, GRID_GPU: ok"
