# Recipe `tests` (sourced by scripts/gpu.sh): every test binary's [gpu] tests, then the CPU tests of the
# binaries that use NVRTC or the driver here (runtime, tuner; TESTS_CPU=0 skips them, CI runs the rest).
# One log for all ($dir/tests.log); one summary line per run.
gpu_line
failed=0
for t in "$bin"/test_*; do
  name=$(basename "$t")
  for filter in "[gpu]" "~[gpu]"; do
    if [ "$filter" = "~[gpu]" ]; then
      [ "${TESTS_CPU:-1}" = 1 ] || continue
      case " ${TESTS_CPU_BINARIES:-test_runtime test_tuner} " in *" $name "*) ;; *) continue ;; esac
    fi
    # Catch2 fails a run whose filter matches nothing; a binary without [gpu] tests is not a failure.
    [ -n "$("$t" "$filter" --list-test-names-only 2>/dev/null | grep -v '^$')" ] || continue
    echo "===== $name $filter" >>"$dir/tests.log"
    timeout "${TEST_TIMEOUT:-240}" "$t" "$filter" -r compact >"$dir/part.log" 2>&1
    rc=$?
    cat "$dir/part.log" >>"$dir/tests.log"
    note "$name $filter: rc=$rc $(last_line "$dir/part.log")"
    rm -f "$dir/part.log"
    [ $rc -eq 0 ] || failed=$((failed + 1))
  done
done
note "tests: $failed run(s) failed"
[ $failed -eq 0 ]
