#!/usr/bin/env bash
# Runs on the GPU machine, from the carried folder (.carry/gpu): every test binary, first its [gpu] tests,
# then all the others, with full logs under $OUT. Prints one summary line per binary and a total at the end.
#   device call: cd .carry/gpu && bash device-gpu-tests.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export FA_KERNELS_DIR="$here/kernels_src"
export XDG_CACHE_HOME=/tmp/flashlab-cache
# Test binaries name their data by the absolute source path they were built in (FA_SOURCE_DIR); the
# device gets a copy of the checkout elsewhere, so point that path at the copy when it is absent.
repo=$(cd "$here/../.." && pwd)
built_in=${FA_BUILT_IN:-/work/main}
if [ ! -e "$built_in" ]; then mkdir -p "$(dirname "$built_in")" && ln -s "$repo" "$built_in"; fi

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
failed=0
for t in "$here"/bin/test_*; do
  name=$(basename "$t")
  for filter in "[gpu]" "~[gpu]"; do
    # FA_SKIP_CPU_RUNS: binaries whose CPU-only tests CI already runs (saves device time).
    [ "$filter" = "~[gpu]" ] && [[ " ${FA_SKIP_CPU_RUNS:-} " == *" $name "* ]] && continue
    # Catch2 fails a run whose filter matches nothing; a binary without [gpu] tests is not a failure.
    [ -n "$("$t" "$filter" --list-test-names-only 2>/dev/null | grep -v '^$')" ] || continue
    # One log for everything: the device returns at most 8 files.
    log="$out/tests.log"
    echo "===== $name $filter" >>"$log"
    "$t" "$filter" -r compact >"$log.part" 2>&1
    rc=$?
    cat "$log.part" >>"$log"
    # Catch2's compact reporter ends with a "Passed N test cases" / "Failed ..." line.
    echo "$name $filter: rc=$rc $(grep -v '^$' "$log.part" | tail -n 1)"
    rm -f "$log.part"
    [ $rc -eq 0 ] || failed=$((failed + 1))
  done
done
echo "device-gpu-tests: $failed run(s) failed"
exit $((failed > 0))
