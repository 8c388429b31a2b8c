# Recipe `grid` (sourced by scripts/gpu.sh): issue 14 item 4, the headline grid tuned in 10-minute device
# calls that resume one another. Each call tunes the lines of GRID_LIST (one fa-tune selection per line:
# family, dtype, head dims, masks, n, direction, strategy, budget) into one SQLite database, within
# GRID_BUDGET_S seconds of tuning in all, and brings the database and the winners back:
#
#   $OUT/fa-tune.sqlite          every measurement and best config so far (no compile cache: it is only a
#                                cache, and its CUBINs would outgrow the 64 MiB a call carries)
#   $OUT/grid_best_configs.tsv   every best config measured on this GPU, db/seed/best_configs.tsv's format,
#                                headed by its provenance (GPU, driver, date, command)
#   $OUT/grid/                   per line: fa-tune's table, --json, --report (packed as grid.tgz by gpu.sh)
#
# Between calls (here, not on the device): `python3 experiments/tuner/ship_grid.py FILES_AT` puts the
# database at .carry/tune/fa-tune.sqlite (carry it with .carry/grid in the next call: the next call resumes
# from it) and merges the winners into db/seed/best_configs.tsv (commit it).
#
# Time: GRID_BUDGET_S (default 480). GRID_SPLIT=ordered (the default) gives each line in turn all the time
# left: the list is most wanted first, and a line is worth tuning only whole (2026-12-02, session 8: 300 s
# split evenly over headline.txt's 11 lines gave each 27 s, enough for the first line's defaults and no
# search). GRID_SPLIT=even splits it over the lines left, as fa-tune splits its --time-limit over its
# problems. Either way a line that is finished (every problem's budget spent or its space done) is answered
# from the database in seconds and passes its time on; a line cut short goes on in the next call where it
# stopped (each problem starts from every measurement stored for it, and its --budget counts them: nothing
# is measured twice, and a line whose budget is spent measures nothing, whatever its warm starts try now).
# A line's fa-tune stops at its --time-limit after the candidate in flight; `timeout` sends SIGTERM 90 s
# later at most (fa-tune then stores the candidate in flight, prints the table so far and exits 143).
#
# Options: GRID_LIST (default experiments/tuner/grids/headline.txt), GRID_BUDGET_S, GRID_DB (the database
# carried in; default .carry/tune/fa-tune.sqlite), GRID_GPUS (all or 0,1,...: fa-tune --gpus, one worker per
# GPU on a multi-GPU kind), GRID_REPLAY (a recorded run: every line answered from it instead of the GPU, for
# the offline test tests/scripts/grid_recipe_test.sh), GRID_FORWARDS (fa-tune --forward-store: each backward
# problem's float64 forward and row statistics, ~75 MiB a headline shape, kept for the other backward
# family's line, restarts and the next call on the same machine; default /tmp/flashlab-forwards, outside the
# work folder so that it outlives the call, never brought back), GRID_GPU (a part of the GPU's name, e.g.
# H200: on another GPU the call tunes nothing and exits 3, since the database keys every row by GPU and
# that GPU's rows would start a grid of their own; a call for nvidia-h200 may be given an H100).
gpu_line
if [ -n "${GRID_GPU:-}" ]; then
  case $gpu_name in
    *"$GRID_GPU"*) ;;
    *) note "grid: the GPU is '$gpu_name', not GRID_GPU=$GRID_GPU: nothing tuned" \
         "(its rows would start a grid of their own)"
       exit 3 ;;
  esac
fi
list=${GRID_LIST:-experiments/tuner/grids/headline.txt}
budget_s=${GRID_BUDGET_S:-480}
split=${GRID_SPLIT:-ordered}
db_in=${GRID_DB:-.carry/tune/fa-tune.sqlite}
grace_s=90
[ -f "$list" ] || { note "grid: GRID_LIST $list is not a file"; exit 2; }
case $budget_s in
  '' | *[!0-9]*) note "grid: GRID_BUDGET_S '$budget_s' is not a whole number of seconds"; exit 2 ;;
esac
case $split in ordered | even) ;; *) note "grid: GRID_SPLIT '$split' is not ordered or even"; exit 2 ;; esac
work=$(mktemp -d /tmp/flashlab-grid.XXXXXX)  # one per call: tests run recipes side by side
trap 'rm -rf "$work"' EXIT
db="$work/fa-tune.sqlite"
if [ -f "$db_in" ]; then
  cp "$db_in" "$db"
  note "grid: resuming from $db_in ($(du -k "$db_in" | cut -f1) KiB)"
else
  note "grid: no $db_in: a fresh database"
fi
replay=()
[ -n "${GRID_REPLAY:-}" ] && replay=(--replay "$GRID_REPLAY")
forwards=${GRID_FORWARDS:-/tmp/flashlab-forwards}
gpus=()  # GRID_GPUS=all (or 0,1,...): every line on every GPU of a multi-GPU kind (issue 18), one database
[ -n "${GRID_GPUS:-}" ] && gpus=(--gpus "$GRID_GPUS")

mapfile -t lines < <(grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$' "$list")
note "grid: ${#lines[@]} lines of $list, ${budget_s} s of tuning, split $split"
started=$(date +%s)
deadline=$((started + budget_s))
status=0
for i in "${!lines[@]}"; do
  k=$((i + 1))
  left=$((deadline - $(date +%s)))
  share=$left
  [ "$split" = even ] && share=$((left / (${#lines[@]} - i)))
  if [ "$share" -lt 1 ]; then
    note "line $k not reached (the call's ${budget_s} s are spent; the next call resumes): ${lines[$i]}"
    continue
  fi
  read -r -a selection <<<"${lines[$i]}"
  line_start=$(date +%s)
  timeout -k 30 $((share + grace_s)) \
    "$bin/fa-tune" --arch sm90 "${selection[@]}" "${replay[@]}" "${gpus[@]}" \
    --time-limit "$share" --db "$db" --forward-store "$forwards" \
    --json "$dir/line$k.json" --report "$dir/report_line$k" \
    --export-best "$work/best_configs.tsv" >"$dir/line$k.txt" 2>"$dir/line$k.err"
  rc=$?
  note "line $k rc=$rc in $(($(date +%s) - line_start)) s (share ${share} s): ${lines[$i]}"
  # The table's rows (family, problem, best, TFLOP/s, why its search ended) into the summary.
  grep -E "^(naive|fa1|fa2|fa3|flash_decode)[a-z0-9_]* " "$dir/line$k.txt" | tee -a "$dir/summary.txt"
  case $rc in 0 | 130 | 143) ;; *) status=$rc ;; esac
done

# What comes back: the measurements and best configs (merged into a fresh file), and the winners.
rm -f "$OUT/fa-tune.sqlite"
"$bin/fa-tune" --db "$OUT/fa-tune.sqlite" --merge "$db" | tee -a "$dir/summary.txt"
size_kib=$(du -k "$OUT/fa-tune.sqlite" 2>/dev/null | cut -f1)
note "grid: $OUT/fa-tune.sqlite ${size_kib:-?} KiB (carried back in as $db_in; a call carries 64 MiB in all)"
# .carry/grid is 11 MiB and the tree ~19 (2026-12-04; each call's raw/ folder adds ~2 with its database copy):
# past ~8 MiB the database crowds the carry (split it by family, or move old raw/ databases out, then).
[ "${size_kib:-0}" -gt 8192 ] &&
  note "grid: WARNING: the database is over 8 MiB; with .carry/grid and the tree it nears the 64 MiB" \
    "a call carries"
if [ -f "$work/best_configs.tsv" ]; then
  {
    gpu_and_driver=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
    echo "# $(date -u +%FT%TZ), $gpu_and_driver, scripts/gpu.sh grid" \
      "(GRID_LIST=$list GRID_BUDGET_S=$budget_s), one fa-tune --arch sm90 per line:"
    for line in "${lines[@]}"; do echo "#   $line"; done
    cat "$work/best_configs.tsv"
  } >"$OUT/grid_best_configs.tsv"
  exported=$(grep -vc -e '^#' -e '^gpu' "$OUT/grid_best_configs.tsv")
  note "grid: $exported best configs in $OUT/grid_best_configs.tsv"
else
  note "grid: no best config was exported (no line ran)"
fi
note "grid: $(($(date +%s) - started)) s in all"
exit $status
