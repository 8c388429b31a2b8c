# Recipe `tests` (sourced by scripts/gpu.sh): every [gpu] test case of every test binary, each case in its
# own process, TESTS_PARALLEL (4) at a time under one deadline, TESTS_BUDGET_S (480 s: a device call is
# 10 minutes, and a case still running then is killed with the rest). Longest first is not known in
# advance, so the cases start in the binaries' order, fa3_sm90's forward cases (the longest, minutes each)
# last unless TESTS_ONLY narrows the set (an extended regex over "binary: case name"). A case that would
# start with less than 5 s left is reported "not run". Then, with TESTS_CPU=1 (the default), the CPU tests
# of the binaries that use NVRTC or the driver here (test_runtime, test_tuner; CI runs the rest).
# Out: $dir/cases/<binary>-<n>.log per case, $dir/cases.txt (one line per case: rc, binary, name, Catch2's
# last line), the summary. Why parallel: one after another the [gpu] cases took longer than a device call
# (2026-12-01: 21 cases of test_kernels_src, the FP8 and mechanism ones 3-5 minutes each); the GPU runs
# them concurrently without trouble (none times anything), NVRTC uses the machine's 16 cores.
gpu_line
budget_s=${TESTS_BUDGET_S:-480}
deadline=$(($(date +%s) + budget_s))
mkdir -p "$dir/cases"
: >"$dir/cases.txt"
jobs=$dir/jobs.tsv
: >"$jobs"
for t in "$bin"/test_*; do
  name=$(basename "$t")
  "$t" "[gpu]" --list-test-names-only 2>/dev/null | sed 's/^ *//' | grep -v '^$' |
    while IFS= read -r case_name; do printf '%s\t%s\n' "$name" "$case_name"; done
done | grep -E "${TESTS_ONLY:-.}" >"$jobs.all"
# Two passes over a file: a `{ grep -v; grep; }` over one pipe gave the second grep nothing (the first read
# it all), which silently dropped every fa3_sm90 forward case until 2026-12-01 session 4.
{ grep -v $'\tfa3_sm90 ' "$jobs.all"; grep $'\tfa3_sm90 ' "$jobs.all"; } | nl -w1 -s$'\t' >"$jobs"
rm -f "$jobs.all"
note "tests: $(wc -l <"$jobs") [gpu] cases, ${TESTS_PARALLEL:-4} at a time, ${budget_s} s"
export bin dir jobs deadline
# Catch2 reads a test spec: commas, brackets, asterisks and backslashes in a case's name are escaped.
cut -f1 "$jobs" | xargs -P "${TESTS_PARALLEL:-4}" -I{} bash -c '
  IFS=$'"'"'\t'"'"' read -r _ binary case_name < <(awk -F"\t" -v i={} "\$1 == i" "$jobs")
  left=$((deadline - $(date +%s)))
  if [ "$left" -lt 5 ]; then printf "not run\t%s\t%s\t(the budget was spent)\n" "$binary" "$case_name" >>"$dir/cases.txt"; exit 0; fi
  spec=$(printf "%s" "$case_name" | sed "s/\\\\/\\\\\\\\/g; s/,/\\\\,/g; s/\\[/\\\\[/g; s/\\*/\\\\*/g")
  log="$dir/cases/$binary-{}.log"
  timeout "$left" "$bin/$binary" "$spec" -r compact >"$log" 2>&1
  rc=$?
  printf "rc=%s\t%s\t%s\t%s\n" "$rc" "$binary" "$case_name" "$(grep -v "^$" "$log" | tail -n 1)" >>"$dir/cases.txt"'
failed=$(grep -vc $'^rc=0\t' "$dir/cases.txt")
sed 's/\t/  /g' "$dir/cases.txt" | tee -a "$dir/summary.txt"
if [ "${TESTS_CPU:-1}" = 1 ]; then
  for name in ${TESTS_CPU_BINARIES:-test_runtime test_tuner}; do
    left=$((deadline - $(date +%s)))
    [ -x "$bin/$name" ] && [ "$left" -ge 5 ] || continue
    timeout "$left" "$bin/$name" "~[gpu]" -r compact >"$dir/cpu_$name.log" 2>&1
    rc=$?
    note "$name ~[gpu]: rc=$rc $(last_line "$dir/cpu_$name.log")"
    [ $rc -eq 0 ] || failed=$((failed + 1))
  done
fi
note "tests: $failed run(s) failed or not run"
[ "$failed" -eq 0 ]
