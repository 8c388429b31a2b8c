# Recipe `fixture` (sourced by scripts/gpu.sh): the strategy tests' fixture on the H200: fa-tune tunes
# fa2_sm80 EXHAUSTIVELY for one problem (bf16, d 128, n 4096, non-causal, headline b = 16384/n = 4,
# h = 2048/d = 16) into a fresh SQLite file and exports every
# candidate (config, verdict, median/p20/p80 ms, TFLOP/s, diagnosis) as TSV. The lead commits that TSV as
#   tests/tuner/data/fa2_sm80_h200_bf16_d128_n4096_full.tsv
# which tests/tuner/strategy/recorded_fixture_test.cpp reads (it is skipped, saying so, until then).
#
# Cost: the space has 168 configs at d 128 (42 of them spill and are pruned after compiling, no GPU time).
# Per candidate after the compile pipeline and the reference cache: ~0.2 s of verification (one run on the
# small problem and one on the timed problem, their verdicts against the cached reference) and ~0.2 s of
# timing (uploads of 2 rotated input sets, 5 warm-ups + 30 runs x ~1.8 ms, nvidia-smi's clock), while 16
# NVRTC workers compile ahead (~2-5 s each, 168 in ~20-50 s of wall time). Expected ~1-2 min; the limit
# below is 280 s. A run cut by the limit keeps every finished measurement: run this script again and it
# resumes from the same database (it only starts a fresh one when none is there).
gpu_line
db=/tmp/flashlab-fixture/fixture.sqlite  # fresh per machine: never the shared tuning database
mkdir -p "$(dirname "$db")"
fixture=fa2_sm80_h200_bf16_d128_n4096_full.tsv

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv \
  >"$dir/fixture_gpu.txt" 2>&1
started=$(date +%s)
timeout 280 "$bin/fa-tune" --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 4096 \
  --causal no --strategy exhaustive --db "$db" --json "$dir/fixture_tune.json" \
  --export-measurements "$dir/$fixture" >"$dir/fixture_tune.txt" 2>"$dir/fixture_tune.err"
rc=$?
echo "fa-tune exhaustive rc=$rc in $(( $(date +%s) - started )) s" | tee -a "$dir/fixture_tune.txt"
# The cache test on the GPU: the same command again answers everything from the database, in seconds.
started=$(date +%s)
timeout 60 "$bin/fa-tune" --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 4096 \
  --causal no --strategy exhaustive --db "$db" >"$dir/fixture_rerun.txt" 2>&1
echo "rerun rc=$? in $(( $(date +%s) - started )) s (expected: 0 measured, all resumed)" |
  tee -a "$dir/fixture_rerun.txt"
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv,noheader >>"$dir/fixture_gpu.txt" 2>&1
echo "fixture: $out/$fixture ($(grep -vc '^#' "$dir/$fixture" 2>/dev/null) lines with the header)"
tail -5 "$dir/fixture_tune.txt"
