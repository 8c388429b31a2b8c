#!/usr/bin/env bash
# Session 10's changes (O's rescale skipped when every factor is 1, wgmma descriptors by addition, the row
# max as a tree, the row sum from the first p) must give the FP8 kernel's output bit for bit. On the GPU:
# fa-check runs the fa3_sm90 FP8 defaults from two kernels_src trees on the same inputs (same seed) and the
# outputs' metrics against float64 (max_abs, RMSE, every checked row's max error, %.17g) must be identical.
#   bash experiments/fa3_sm90_fp8/same_bits.sh OLD_KERNELS_DIR NEW_KERNELS_DIR [build/bin]
# DTYPES, DIMS, INPUTS (space-separated) narrow the grid (each (tree, dtype, d, mask) is one NVRTC compile).
set -euo pipefail
old=$1 new=$2 bin=${3:-build/bin}
out=$(mktemp -d)
fail=0
for dtype in ${DTYPES:-fp8_e4m3 fp8_e5m2}; do
  for d in ${DIMS:-64 128 256}; do
    for causal in "" --causal; do
      for inputs in ${INPUTS:-normal max_in_first_block max_in_last_block constant_rows fa3_outliers}; do
        tag="$dtype-d$d${causal:+-causal}-$inputs"
        for side in old new; do
          dir=$old; [ $side = new ] && dir=$new
          "$bin/fa-check" --family fa3_sm90 --dtype $dtype --head-dim $d --seqlen 1000 --seqlen-k 1300 \
            --batch 1 --heads 4 --heads-kv 2 --inputs $inputs $causal --kernels-dir "$dir" \
            --json "$out/$tag-$side.json" > /dev/null || true
        done
        if python3 - "$out/$tag-old.json" "$out/$tag-new.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
keep = lambda r: {k: r.get(k) for k in ("verdict", "outputs", "worst_rows")}
sys.exit(0 if keep(a) == keep(b) and a.get("outputs") else 1)
EOF
        then echo "same: $tag"; else echo "DIFFERENT: $tag"; fail=1; fi
      done
    done
  done
done
exit $fail
