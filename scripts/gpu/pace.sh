# Recipe `pace` (sourced by scripts/gpu.sh): issue 14 item 6's before/after in one device call. fa-tune tunes
# fa2_sm80's whole space (bf16, d 128, n 4096, non-causal, headline b4 h16: 168 configs) exhaustively, cold
# (a fresh database each: no compile cache, no measurements), first with --pace baseline (the 2026-11-29
# protocol: verify, then 30 timed runs for every candidate), then with --pace fast (verdict computed while
# the GPU times, early stop of clearly slower candidates, inputs encoded once), then fast again warm (every
# answer from the database). Both exports carry the per-stage times (compile wait, verify, timing) of every
# candidate. Expected: baseline ~170 s (2026-11-29: 167 s), fast <= 90 s (the target), warm <= 2 s;
# both must name the same winner (the fast pace never cuts a config within 1.25x of the best).
gpu_line
root=/tmp/flashlab-pace
rm -rf "$root" && mkdir -p "$root"
args=(--arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 4096 --causal no \
  --strategy exhaustive)
for pace in baseline fast; do
  started=$(date +%s)
  timeout 250 "$bin/fa-tune" "${args[@]}" --pace "$pace" --db "$root/$pace.sqlite" --json "$dir/$pace.json" \
    --export-measurements "$dir/$pace.tsv" >"$dir/$pace.txt" 2>"$dir/$pace.err"
  note "pace $pace cold rc=$? in $(( $(date +%s) - started )) s"
  grep -E "s wall|^fa2_sm80 " "$dir/$pace.txt" | tee -a "$dir/summary.txt"
done
started=$(date +%s)
timeout 60 "$bin/fa-tune" "${args[@]}" --pace fast --db "$root/fast.sqlite" >"$dir/fast_warm.txt" 2>&1
note "pace fast warm rc=$? in $(( $(date +%s) - started )) s (expected: 0 measured, all resumed)"
grep -E "^fa2_sm80 " "$dir/fast_warm.txt" | tee -a "$dir/summary.txt"
