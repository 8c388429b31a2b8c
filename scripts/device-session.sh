#!/usr/bin/env bash
# One H200 session, run from the carried folder (.carry/gpu): what the lead checks on the GPU before
# calling GPU work done. Every step has its own timeout and log under $OUT; a summary is printed last.
#   1. NVRTC's ptxas log on this machine (registers and spills in the program log)
#   2. every [gpu] test of every test binary (and the runtime/tuner CPU tests, which use NVRTC here)
#   3. fa-tune on fa2_sm80 (bf16, d 64 and 128, causal and not, n = 4096), the shipped seeds exported
#   4. fa-mutate --target gpu on fa2_sm80, when the binary has the GPU target
set -u
here=$(cd "$(dirname "$0")" && pwd)
# The device returns at most 8 files: the key ones go to $OUT, every log to $logs, tarred at the end.
out=${OUT:-/tmp/flashlab-out}
logs=/tmp/flashlab-logs
mkdir -p "$out" "$logs"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache
cd "$here"
db=/tmp/flashlab-tune.sqlite
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$summary"
[ -f diag/nvrtc_log.py ] && timeout 60 python3 diag/nvrtc_log.py >"$out/nvrtc_diag.txt" 2>&1 && head -3 "$out/nvrtc_diag.txt" >>"$summary"

OUT="$logs" FA_SKIP_CPU_RUNS="test_numerics test_db test_kernels_src" timeout 200 bash device-gpu-tests.sh >"$logs/gpu_tests_summary.txt" 2>&1
note "gpu tests rc=$?"; cat "$logs/gpu_tests_summary.txt" >>"$summary"; cp "$logs/tests.log" "$out/tests.log"

for d in 128 64; do
  timeout 110 bin/fa-tune --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim $d --seqlen 4096 --causal both \
    --strategy bayes --budget 12 --db "$db" --json "$logs/tune_d$d.json" >"$out/tune_d$d.txt" 2>"$logs/tune_d$d.err"
  note "fa-tune d$d rc=$?"; grep -v "^$" "$out/tune_d$d.txt" | tail -4 >>"$summary"
done
timeout 40 bin/fa-tune --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 64,128 --seqlen 4096 --causal both \
  --strategy bayes --budget 12 --db "$db" --export-best "$out/best_configs.tsv" >"$logs/tune_resume.txt" 2>&1
note "fa-tune rerun (all from the database) rc=$?"; grep -v "^$" "$logs/tune_resume.txt" | tail -6 >>"$summary"

if bin/fa-mutate --help 2>/dev/null | grep -q "gpu"; then
  timeout 120 bin/fa-mutate --target gpu --family fa2_sm80 --dtype bf16 --json "$logs/mutants_gpu.json" \
    >"$out/mutants_gpu.txt" 2>&1
  note "fa-mutate gpu rc=$?"; tail -8 "$out/mutants_gpu.txt" >>"$summary"
fi
tar czf "$out/logs.tgz" -C "$logs" . 2>/dev/null
echo "=== summary"; cat "$summary"
