# Recipe `mutants` (sourced by scripts/gpu.sh): fa-mutate --target gpu over the whole catalogue (forward
# mutants on the forward kernel, backward ones on <family>_bwd) and every input family: fa2_sm80 and fa1 in
# bf16 and fp16, fa2_fp8 in e4m3. Per family: the table (.txt), the JSON report, the SQLite rows (target
# gpu, one database) and the killing inputs and false positives as .npy with case.json and fa-check.sh
# (dump/, replay offline with FA_CHECK=build/bin/fa-check sh <case>/fa-check.sh). MUTATE_ARGS: extra
# fa-mutate options. Each family runs under what is left of MUTANTS_BUDGET_S (420 s; fa2_sm80 at most 200 s,
# it matters most); fa2_sm80 and fa1 took 42 s and 38 s on the H200 (2026-11-29), before bwd-race was also
# racechecked (compute-sanitizer on PATH: per dtype one child for the mutant and one for the correct
# backward, each within --racecheck-timeout; their time on the H200 is not measured yet).
gpu_line
total_budget_s=${MUTANTS_BUDGET_S:-420}
fa2_budget_s=200
start=$(date +%s)
final_rc=0
for run in ${MUTANTS_RUNS:-fa2_sm80:bf16,fp16 fa1:bf16,fp16 fa2_fp8:fp8_e4m3}; do
  family=${run%%:*} dtypes=${run##*:}
  budget=$((total_budget_s - ($(date +%s) - start)))
  if [ "$family" = fa2_sm80 ] && [ "$budget" -gt "$fa2_budget_s" ]; then budget=$fa2_budget_s; fi
  if [ "$budget" -le 10 ]; then
    note "$family not run: the time budget is spent"
    final_rc=1
    continue
  fi
  # shellcheck disable=SC2086
  timeout --signal=TERM "$budget" "$bin/fa-mutate" --target gpu --family "$family" --dtype "$dtypes" \
    --json "$dir/$family.json" --db "$dir/mutants_gpu.sqlite" --compile-db "$XDG_CACHE_HOME/compile.sqlite" \
    --dump-dir "$dir/dump" ${MUTATE_ARGS:-} >"$dir/$family.txt" 2>&1
  rc=$?
  [ "$rc" -eq 124 ] && echo "cut short after ${budget} s" >>"$dir/$family.txt"
  note "$family exit $rc at $(($(date +%s) - start)) s (0 all killed and named, 1 survivor/misnamed/false" \
    "positive or a GPU failure, 2 bad input, 3 no GPU, 124 time limit)"
  tail -n 4 "$dir/$family.txt"
  [ "$rc" -ne 0 ] && final_rc=$rc
done
if [ -d "$dir/dump" ]; then
  tar czf "$dir/dump.tgz" -C "$dir" dump && rm -rf "$dir/dump"
  note "$(du -h "$dir/dump.tgz" | cut -f1) of killing inputs in dump.tgz"
fi
exit "$final_rc"
