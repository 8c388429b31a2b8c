#!/usr/bin/env bash
# The backward on the H200, run from the carried folder (.carry/gpu: bin/, kernels_src/, peers/), logs under
# $OUT. What it answers (issue 5, backward part), each step with its own timeout, ~5 min of GPU time in all:
#   1. the [gpu] backward tests: both dQ modes of fa2_sm80_bwd and fa1_bwd correct on every input family of
#      numerics (awkward shapes: odd n, n_q != n_k, fully masked rows, GQA), mutants caught in every path,
#      deterministic mode bit-identical run to run (the full-space NVRTC compile, [.nvrtc-space], is CPU
#      work: run it anywhere, it is not repeated here);
#   2. fa-bench --check-only for each backward family's defaults (bf16 and fp16, d 64/128, causal and not);
#   3. fa2_sm80_bwd timed in both dQ modes (defaults: atomic; the deterministic config), n 1024..16384, d 64
#      and 128, bf16 and fp16, causal and not, with PyTorch's FA2 and cuDNN backward timed in the same run
#      by the same protocol (peers/peers.py --bwd); ratios printed;
#   4. compute-sanitizer memcheck and racecheck on one small config of each backward family.
#   device call: cd .carry/gpu && bash device-bwd.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:-/tmp/flashlab-out}
logs=/tmp/flashlab-bwd-logs
mkdir -p "$out" "$logs"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 FA_KERNELS_DIR="$here/kernels_src" XDG_CACHE_HOME=/tmp/flashlab-cache
export PYTHONUNBUFFERED=1
cd "$here"
summary="$out/bwd_summary.txt"
: >"$summary"
note() { echo "$*" | tee -a "$summary"; }
# The whole script stays under 6 minutes of device time: each step's timeout is capped by what is left of
# a 340 s budget, and a step with less than 10 s left is skipped (and says so).
budget_s=${BWD_BUDGET_S:-340}
cap() { local left=$((budget_s - SECONDS)); [ "$left" -lt "$1" ] && echo "$left" || echo "$1"; }
enough() { [ $((budget_s - SECONDS)) -ge 10 ] || { note "skipped (time budget): $*"; return 1; }; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$summary"
date -u +%FT%TZ >>"$summary"

# 1. [gpu] backward tests (names, not the tag: the forward [gpu] tests are device-session.sh's).
timeout "$(cap 150)" bin/test_kernels_src "backward families*,backward mutants*,fa2_sm80_bwd deterministic*" -r compact \
  >"$logs/bwd_gpu_tests.txt" 2>&1
note "bwd [gpu] tests rc=$?: $(grep -v '^$' "$logs/bwd_gpu_tests.txt" | tail -n 1)"

# 2. checks of the defaults (fa-bench's small awkward problems plus sampled rows of n = 1024).
for fam in fa2_sm80_bwd fa1_bwd; do
  enough "check $fam" || continue
  timeout "$(cap 50)" bin/fa-bench --family $fam --direction bwd --dtype bf16,fp16 --head-dim 64,128 --seqlen 1024 \
    --causal both --check-only >"$logs/check_$fam.txt" 2>&1
  note "fa-bench --check-only $fam rc=$? ($(grep -c ' check ' "$logs/check_$fam.txt") checks, $(grep -c FAIL "$logs/check_$fam.txt") failed)"
done

# 3. timing: ours (both dQ modes) and the peers, same shapes, same run.
seqlens=1024,2048,4096,8192,16384
# One fa-bench per dtype: a run cut by its timeout writes no CSV, so smaller runs keep what finished.
for dt in bf16 fp16; do
  enough "timing, atomic dQ $dt" || continue
  timeout "$(cap 55)" bin/fa-bench --family fa2_sm80_bwd --direction bwd --dtype $dt --head-dim 64,128 \
    --seqlen $seqlens --causal both --runs 20 --csv "$logs/bwd_atomic_$dt.csv" >"$logs/bench_atomic_$dt.txt" 2>&1
  note "fa-bench atomic $dt rc=$? ($(grep -c TFLOP "$logs/bench_atomic_$dt.txt") shapes timed)"
done
{ cat "$logs/bwd_atomic_bf16.csv"; tail -n +2 "$logs/bwd_atomic_fp16.csv"; } >"$out/bwd_atomic.csv" 2>/dev/null
# The deterministic config per head dim (Fa2Sm80BwdFamily::deterministic_config).
det64=kBlockM=64,kBlockN=64,kNWarps=4,kStages=1,kDqAtomic=0,kQBlockM=64,kQBlockN=64
det128=kBlockM=32,kBlockN=64,kNWarps=4,kStages=1,kDqAtomic=0,kQBlockM=64,kQBlockN=32
for d in 64 128; do
  cfg=det$d
  enough "timing, deterministic d$d" || continue
  timeout "$(cap 50)" bin/fa-bench --family fa2_sm80_bwd --direction bwd --dtype bf16,fp16 --head-dim $d \
    --seqlen $seqlens --causal both --runs 20 --config "${!cfg}" --csv "$logs/bwd_det_d$d.csv" \
    >"$logs/bench_det_d$d.txt" 2>&1
  note "fa-bench deterministic d$d rc=$?"
done
{ cat "$logs/bwd_det_d64.csv"; tail -n +2 "$logs/bwd_det_d128.csv"; } >"$out/bwd_deterministic.csv" 2>/dev/null
enough "peers" &&
timeout "$(cap 90)" python3 peers/peers.py --bwd --out "$out/peers_bwd.csv" --dtype bf16,fp16 --head-dim 64,128 \
  --seqlen $seqlens >"$logs/peers_bwd.txt" 2>&1
note "peers rc=$?"
python3 - "$out/bwd_atomic.csv" "$out/bwd_deterministic.csv" "$out/peers_bwd.csv" <<'PY' | tee -a "$summary"
import csv, sys
def rows(path, skip_comment=False):
    try:
        with open(path) as f:
            lines = [l for l in f if not l.startswith("#")]
        return list(csv.DictReader(lines))
    except OSError:
        return []
key = lambda r: (r["dtype"], int(r["head_dim"]), int(r["seqlen"]), r["mask"])
ours = {"atomic": {key(r): float(r["tflops"]) for r in rows(sys.argv[1])},
        "determ": {key(r): float(r["tflops"]) for r in rows(sys.argv[2])}}
peers = {}
for r in rows(sys.argv[3]):
    if r["direction"] == "bwd":
        peers.setdefault(r["backend"], {})[key(r)] = float(r["tflops"])
fa2, cudnn = peers.get("flash", {}), peers.get("cudnn", {})
print("backward TFLOP/s (ratio to PyTorch FA2): dtype d n mask | atomic | deterministic | FA2 | cuDNN")
for k in sorted(set(ours["atomic"]) | set(ours["determ"])):
    a, dt, f, c = ours["atomic"].get(k), ours["determ"].get(k), fa2.get(k), cudnn.get(k)
    fmt = lambda x: f"{x:6.1f}" if x else "     -"
    ratio = lambda x: f"({x / f:4.2f}x)" if x and f else "       "
    print(f"{k[0]} d{k[1]:<3d} n{k[2]:<5d} {k[3]:6s} | {fmt(a)} {ratio(a)} | {fmt(dt)} {ratio(dt)} | {fmt(f)} | {fmt(c)}")
PY

# 4. sanitizers: one small config per backward family (the defaults, d64 causal, n 256).
for fam in fa2_sm80_bwd fa1_bwd; do
  for tool in memcheck racecheck; do
    enough "$tool $fam" || continue
    timeout "$(cap 45)" compute-sanitizer --tool $tool --error-exitcode 9 bin/fa-bench --family $fam --direction bwd \
      --dtype bf16 --head-dim 64 --seqlen 256 --causal yes --check-only >"$logs/sanitizer_${fam}_$tool.txt" 2>&1
    note "compute-sanitizer $tool $fam rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$logs/sanitizer_${fam}_$tool.txt" | tr '\n' ' ')"
  done
done

tar czf "$out/bwd_logs.tgz" -C "$logs" . 2>/dev/null
echo "=== summary"; cat "$summary"
