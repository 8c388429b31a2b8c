#!/usr/bin/env bash
# alternate.sh: is a gap between two configs of one problem the card's, or the moment's (clock, power)? It
# times each config with fa-bench in turn, ROUNDS rounds (a b a b ...), while nvidia-smi samples the clocks,
# power and clock event reasons every 100 ms; marks.txt holds each command's start and end, so
# experiments/tuner/power_windows.py reads the folder. A config's TFLOP/s that holds across rounds against
# the other's is the card's; one that moves with the clock is the moment's.
#   CARRY=$PWD/.carry/grid bash experiments/card_transfer/alternate.sh LABEL "PROBLEM" CONFIG_A CONFIG_B ...
# PROBLEM: fa-bench's options for one problem, e.g. "--family fa3_sm90 --dtype bf16 --head-dim 256 --seqlen
# 16384 --causal no". Environment: ROUNDS (3), RUNS (300 timed runs a command). Writes $OUT/LABEL.tgz (the
# folder LABEL: CSVs, logs, marks.txt, smi.csv, reasons.csv, table.md) and prints table.md. Each command's
# ROUND-cI-runs.csv (fa-bench --samples) holds every timed run with its UTC end; table.md ends with
# experiments/tuner/run_modes.py's reading of them beside smi.csv (which runs were slow, and with what).
set -uo pipefail
if [ $# -lt 3 ] || [ -z "${CARRY:-}" ] || [ -z "${OUT:-}" ]; then
  echo "usage: CARRY=DIR OUT=DIR alternate.sh LABEL \"FA-BENCH PROBLEM OPTIONS\" CONFIG..." >&2
  exit 2
fi
label=$1
read -r -a problem <<<"$2"
shift 2
configs=("$@")
rounds=${ROUNDS:-3}
runs=${RUNS:-300}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)/$label
mkdir -p "$work"
cd "$work" || exit 1
{
  echo "# alternate.sh $label: ${problem[*]}, $rounds rounds, $runs runs each"
  echo "# $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1), $(date -u +%FT%TZ)"
} >header.txt
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv,noheader \
  -lms 100 >smi.csv &
smi=$!
nvidia-smi --query-gpu=timestamp,clocks_event_reasons.active --format=csv,noheader -lms 100 >reasons.csv &
reasons=$!
for round in $(seq "$rounds"); do
  for i in "${!configs[@]}"; do
    name="$round c$i"
    echo "$name start $(date -u +%FT%T.%N)" >>marks.txt
    timeout -k 5 120 "$CARRY/bin/fa-bench" "${problem[@]}" --config "${configs[$i]}" --runs "$runs" \
      --csv "$round-c$i.csv" --samples "$round-c$i-runs.csv" >"$round-c$i.log" 2>&1
    echo "$name end $(date -u +%FT%T.%N) rc $?" >>marks.txt
  done
done
kill "$smi" "$reasons" 2>/dev/null
wait 2>/dev/null
{
  cat header.txt
  echo
  for i in "${!configs[@]}"; do echo "- c$i: \`${configs[$i]}\`"; done
  echo
  # Each command's row of its CSV, in the order they ran, read as every summarizer reads fa-bench's CSVs.
  python3 - "$rounds" "${#configs[@]}" "$here/.." <<'EOF'
import sys
sys.path.insert(0, sys.argv[3])
from bench_csv import csv_rows, passed  # experiments/bench_csv.py
rounds, configs = map(int, sys.argv[1:3])
print("| round | config | TFLOP/s | median ms | p20-p80 ms | checks |")
print("|---|---|---|---|---|---|")
for r in range(1, rounds + 1):
    for c in range(configs):
        try:
            row = csv_rows(f"{r}-c{c}.csv")[0]
            print(f"| {r} | c{c} | {float(row['tflops']):.1f} | {float(row['median_ms']):.3f} | "
                  f"{float(row['p20_ms']):.3f}-{float(row['p80_ms']):.3f} | {str(passed(row)).lower()} |")
        except (OSError, IndexError, KeyError, ValueError):
            print(f"| {r} | c{c} | no row: see {r}-c{c}.log | | | |")
EOF
  echo
  python3 "$here/../tuner/power_windows.py" .
  echo
  python3 "$here/../tuner/run_modes.py" .
} >table.md 2>&1
cat table.md
tar czf "$OUT/$label.tgz" -C "$(dirname "$work")" "$label"
