# Recipe `tuning` (sourced by scripts/gpu.sh): fa-tune on fa2_sm80 (bf16, d 128 and 64, causal and not,
# n 4096, bayes, budget 12) into a fresh database, then the same request again (answered from the database)
# with the best configs exported ($OUT/tuning/best_configs.tsv, the format of db/seed/best_configs.tsv).
# The rerun must store every best again as it was, recorded_at included (when the best was measured,
# db/README.md): the export after the first runs (best_first.tsv) and the rerun's are compared.
# The tuner benchmark (whole space, headline shapes, peers) is experiments/tuner.
gpu_line
db=/tmp/flashlab-tuning/tune.sqlite
rm -rf "$(dirname "$db")" && mkdir -p "$(dirname "$db")"
for d in 128 64; do
  timeout 110 "$bin/fa-tune" --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim $d --seqlen 4096 \
    --causal both --strategy bayes --budget 12 --db "$db" --json "$dir/tune_d$d.json" \
    --export-best "$dir/best_first.tsv" >"$dir/tune_d$d.txt" 2>"$dir/tune_d$d.err"
  note "fa-tune d$d rc=$?"
  grep -v "^$" "$dir/tune_d$d.txt" | tail -4 | tee -a "$dir/summary.txt"
done
timeout 40 "$bin/fa-tune" --arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 64,128 --seqlen 4096 \
  --causal both --strategy bayes --budget 12 --db "$db" --export-best "$dir/best_configs.tsv" \
  >"$dir/tune_rerun.txt" 2>&1
note "fa-tune rerun (all from the database) rc=$?"
grep -v "^$" "$dir/tune_rerun.txt" | tail -6 | tee -a "$dir/summary.txt"
# The rows only: the exports' comment lines name their own command and time.
rows() { grep -v '^#' "$1" 2>/dev/null; }
kept=$(rows "$dir/best_configs.tsv" | tail -n +2 | wc -l)  # less the column names
if [ "$kept" -eq 0 ]; then
  note "rerun's best configs: none exported"
elif diff <(rows "$dir/best_first.tsv") <(rows "$dir/best_configs.tsv") >"$dir/best_diff.txt"; then
  note "rerun's best configs: the same $kept rows as the first runs', recorded_at included"
else
  note "rerun's best configs DIFFER from the first runs' (best_diff.txt):"
  head -n 8 "$dir/best_diff.txt" | tee -a "$dir/summary.txt"
fi
