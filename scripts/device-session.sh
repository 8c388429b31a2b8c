#!/usr/bin/env bash
# One H200 session, run from the carried folder (.carry/gpu): what the lead checks on the GPU before
# calling GPU work done. Every step has its own timeout and log under $OUT; a summary is printed last.
#   1. NVRTC's ptxas log on this machine (registers and spills in the program log)
#   2. every [gpu] test of every test binary (and the runtime/tuner CPU tests, which use NVRTC here)
#   3. fa-tune on fa2_sm80 (bf16, d 64 and 128, causal and not, n = 4096), the shipped seeds exported
#   4. fa-mutate --target gpu on fa2_sm80, when the binary has the GPU target
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}
mkdir -p "$out"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache
cd "$here"
db=/tmp/flashlab-tune.sqlite
summary="$out/summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$summary"
[ -f diag/nvrtc_log.py ] && timeout 60 python3 diag/nvrtc_log.py >"$out/nvrtc_diag.txt" 2>&1 && head -3 "$out/nvrtc_diag.txt" >>"$summary"

timeout 300 bash device-gpu-tests.sh >"$out/gpu_tests_summary.txt" 2>&1
note "gpu tests rc=$?"; cat "$out/gpu_tests_summary.txt" >>"$summary"

for d in 128 64; do
  timeout 150 bin/fa-tune --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim $d --seqlen 4096 --causal both \
    --strategy bayes --budget 12 --db "$db" --json "$out/tune_d$d.json" >"$out/tune_d$d.txt" 2>"$out/tune_d$d.err"
  note "fa-tune d$d rc=$?"; grep -v "^$" "$out/tune_d$d.txt" | tail -4 >>"$summary"
done
timeout 60 bin/fa-tune --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 64,128 --seqlen 4096 --causal both \
  --strategy bayes --budget 12 --db "$db" --export-best "$out/best_configs.tsv" >"$out/tune_resume.txt" 2>&1
note "fa-tune rerun (all from the database) rc=$?"; grep -v "^$" "$out/tune_resume.txt" | tail -6 >>"$summary"

if bin/fa-mutate --help 2>/dev/null | grep -q "gpu"; then
  timeout 200 bin/fa-mutate --target gpu --family fa2_sm80 --dtype bf16 --json "$out/mutants_gpu.json" \
    >"$out/mutants_gpu.txt" 2>&1
  note "fa-mutate gpu rc=$?"; tail -8 "$out/mutants_gpu.txt" >>"$summary"
fi
echo "=== summary"; cat "$summary"
