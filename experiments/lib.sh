# Sourced by every experiments/<question>/run.sh: where the binaries are, where the output goes, the run's
# header (GPU, driver, date, command), and resumable steps each under a timeout. Not run on its own.
#
#   binaries   $CARRY/bin when CARRY is set (the carried build, scripts/build-portable.sh; scripts/gpu.sh
#              sets it), else the repository's build/bin
#   kernels    $CARRY/kernels_src, else the repository's kernels_src (NVRTC compiles them)
#   output     steps run in $FL_WORK/<question> (default /tmp/flashlab-experiments, kept while the machine
#              stays warm); after every step the folder is packed into $OUT/<question>.tgz and the step's
#              line appended to $OUT/<question>.summary.txt: two files, whatever the step count (a device
#              call returns at most 8), and a call cut by its limit still returns what finished. Unpack
#              with tar xzf into results/<date>/ (the tarball holds <question>/...).
#   resuming   a step whose <name>.done exists in the work folder is skipped: rerunning the same command
#              on the same machine continues where the last call stopped (FL_FRESH=1 starts over)
#   timeouts   every GPU command runs under `timeout` (fl_step's first argument, seconds)
#   checks     fa-bench records each check it passed in $FL_WORK/fa-bench-checks.tsv (FA_BENCH_CHECK_LOG):
#              a shape the same binary already checked on this GPU with the same config is timed without
#              its check again (its table row says "checked earlier"), in any question of the machine
#              (FA_BENCH_CHECK_LOG= , empty, checks everything again)
#   reuse      fl_reuse: a step whose measurement another question of this machine already made (the same
#              binaries, GPU, command and shapes) takes those rows instead of timing them again

fl_init() {
  fl_question=$1
  fl_here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
  local root
  root=$(cd "$fl_here/../.." && pwd)
  if [ -n "${CARRY:-}" ]; then
    fl_bin=$(cd "$CARRY" && pwd)/bin
    fl_kernels=$(cd "$CARRY" && pwd)/kernels_src
  else
    fl_bin=$root/build/bin
    fl_kernels=$root/kernels_src
  fi
  fl_work=${FL_WORK:-/tmp/flashlab-experiments}/$fl_question
  fl_out=${OUT:-/tmp/flashlab-out}
  [ "${FL_FRESH:-0}" = 1 ] && rm -rf "$fl_work"
  mkdir -p "$fl_work" "$fl_out"
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export FA_KERNELS_DIR=$fl_kernels XDG_CACHE_HOME=${XDG_CACHE_HOME:-/tmp/flashlab-cache} PYTHONUNBUFFERED=1
  export FA_BENCH_CHECK_LOG=${FA_BENCH_CHECK_LOG-$(dirname "$fl_work")/fa-bench-checks.tsv}
  if [ ! -f "$fl_work/header.txt" ]; then
    {
      echo "question: $fl_question"
      echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
      if command -v nvidia-smi >/dev/null 2>&1; then
        echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,memory.total \
          --format=csv,noheader 2>/dev/null | head -n 1)"
      else
        echo "gpu: none (nvidia-smi not found)"
      fi
      echo "binaries: $fl_bin"
      echo "command: $FL_COMMAND"
    } >"$fl_work/header.txt"
  fi
  cat "$fl_work/header.txt" | tee "$fl_out/$fl_question.summary.txt"
}

# fl_step NAME TIMEOUT_S COMMAND...: runs COMMAND once (stdout and stderr to NAME.log in the work folder)
# unless NAME.done exists; prints one line with its exit code and seconds. A step that failed is rerun next
# time. Returns the command's exit code (0 when skipped).
fl_step() {
  local name=$1 limit=$2
  shift 2
  if [ -f "$fl_work/$name.done" ]; then
    echo "step $name: done earlier (remove $fl_work/$name.done to redo)"
    return 0
  fi
  local t0=$SECONDS rc
  (cd "$fl_work" && timeout --kill-after=10 "$limit" "$@") >"$fl_work/$name.log" 2>&1
  rc=$?
  [ $rc -eq 0 ] && touch "$fl_work/$name.done"
  local note=""
  [ $rc -eq 124 ] && note=" (timed out after ${limit} s)"
  echo "step $name: rc=$rc in $((SECONDS - t0)) s$note; $(tail -n 1 "$fl_work/$name.log" 2>/dev/null |
      cut -c1-160)" |
    tee -a "$fl_out/$fl_question.summary.txt"
  fl_sync
  return $rc
}

# fl_reuse NAME QUESTION STEP [COLUMN=VALUE...]: NAME.csv from QUESTION's STEP.csv on this machine (its work
# folder beside ours, the step finished: STEP.done), keeping the rows that match every COLUMN=VALUE (and the
# '#' lines), when the two steps would run the same command on the same shapes: the rows are the same
# measurement, so the device time is not spent twice. Returns 1 (the caller then runs its own step) when
# that step has not finished here (another machine, FL_FRESH, a failed step) or has none of those rows.
fl_reuse() {
  local name=$1 question=$2 step=$3
  shift 3
  if [ -f "$fl_work/$name.done" ]; then
    echo "step $name: done earlier (remove $fl_work/$name.done to redo)"
    return 0
  fi
  local source_dir
  source_dir=$(dirname "$fl_work")/$question
  [ -f "$source_dir/$step.done" ] && [ -f "$source_dir/$step.csv" ] || return 1
  python3 "$fl_here/../reuse_rows.py" "$source_dir/$step.csv" "$fl_work/$name.csv" "$@" \
    >"$fl_work/$name.log" 2>&1 ||
    return 1
  touch "$fl_work/$name.done"
  echo "step $name: reused $question/$step.csv ($*): $(tail -n 1 "$fl_work/$name.log")" |
    tee -a "$fl_out/$fl_question.summary.txt"
  fl_sync
}

# Packs the work folder (logs, CSV, JSON, plots) into $OUT/<question>.tgz: never the .done markers, nor a
# SQLite database, the machine's working cache (card_transfer's at n 16384 was 66 MiB, past the 16 MiB a
# returned file may hold, and the whole tarball came back as nothing): a question exports what it measured
# (card_transfer: tune.tsv).
fl_sync() {
  tar czf "$fl_out/$fl_question.tgz.tmp" --exclude='*.done' --exclude='*.sqlite' --exclude='*.sqlite-*' \
    -C "$(dirname "$fl_work")" "$fl_question" &&
    mv "$fl_out/$fl_question.tgz.tmp" "$fl_out/$fl_question.tgz"
}

# The plots, when gnuplot is here (the GPU machine usually has none: plot.sh runs again where the results
# are committed).
fl_plot() {
  if command -v gnuplot >/dev/null 2>&1 && [ -x "$fl_here/plot.sh" ]; then
    "$fl_here/plot.sh" "$fl_work" && echo "plots: in $fl_question.tgz"
    fl_sync
  else
    echo "plots: skipped here (no gnuplot); run $fl_question/plot.sh RESULTS_DIR where gnuplot is"
  fi
}
