# Recipe `multigpu` (sourced by scripts/gpu.sh): issue 18 on a multi-GPU kind (nvidia-h200-x2, -x4, -x8): the
# same grid tuned cold on one GPU (--gpus 0) and on every GPU (--gpus all), each into a fresh database, then
# the wall times, the speed-up and whether the winners are identical. GRID overrides the grid's options
# (default: fa2_sm80 bf16, d 64 and 128, n 4096, both masks, exhaustive: 4 (problem, family) pairs, ~1 min
# each on one H200 with --pace fast); on x8 there are fewer pairs than GPUs, so each pair's candidates are
# split over the workers (tune/shard.hpp). On a single-GPU kind both runs take the same one-worker path.
gpu_line
nvidia-smi --query-gpu=index,name,uuid,clocks.sm,temperature.gpu --format=csv,noheader |
  tee -a "$dir/summary.txt"
root=/tmp/flashlab-multigpu
rm -rf "$root" && mkdir -p "$root"
read -r -a grid <<<"${GRID:---family fa2_sm80 --dtype bf16 --head-dim 64,128 --seqlen 4096 --causal both \
--strategy exhaustive}"
for gpus in 0 all; do
  started=$(date +%s)
  timeout 280 "$bin/fa-tune" --arch sm90 "${grid[@]}" --gpus "$gpus" --db "$root/$gpus.sqlite" \
    --json "$dir/gpus_$gpus.json" >"$dir/gpus_$gpus.txt" 2>"$dir/gpus_$gpus.err"
  rc=$?
  echo "$(( $(date +%s) - started ))" >"$root/$gpus.wall"
  note "--gpus $gpus rc=$rc in $(cat "$root/$gpus.wall") s"
  grep -E "^fa2_sm80 |^--gpus" "$dir/gpus_$gpus.txt" | tee -a "$dir/summary.txt"
done
python3 - "$dir" "$root" <<'PY' | tee -a "$dir/summary.txt"
import json, sys
d, root = sys.argv[1], sys.argv[2]
runs = {g: json.load(open(f"{d}/gpus_{g}.json")) for g in ("0", "all")}
best = {g: {(r["family"], r["problem"]): r["best_config"] for r in runs[g]["results"]} for g in runs}
wall = {g: int(open(f"{root}/{g}.wall").read()) for g in runs}
same = best["0"] == best["all"]
print(f"wall: 1 GPU {wall['0']} s, all GPUs {wall['all']} s, speed-up {wall['0'] / max(wall['all'], 1):.2f}x; "
      f"winners identical: {same}")
for key in best["0"]:
    if best["0"][key] != best["all"].get(key):
        print("differs:", key, best["0"][key], "vs", best["all"].get(key))
PY
