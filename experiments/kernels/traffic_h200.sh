#!/usr/bin/env bash
# DRAM bytes moved and device memory allocated by one forward of naive, fa1 and fa2_sm80 (issue 5, item 7):
# bf16, d = 128, non-causal, headline shapes (b = 16384/n, h = 2048/d), n = 1024 ... 16384.
# ncu counts dram__bytes_read/write of every kernel of exactly one launch sequence (`fa-bench
# --launch-once`: no checks, no timing), with --clock-control none (the GPU's own clocks, as timed runs
# see them); the sum over the sequence's kernels is one forward's traffic. Device memory is what the
# problem allocates (fa-bench's "MiB" column: Q, K, V, O, LSE and the family's scratch; naive's n^2 S and P).
#   device call, from the repository root with .carry/gpu carried:  bash scripts/gpu.sh traffic
set -uo pipefail
here=${CARRY:?run through scripts/gpu.sh (CARRY: the carried bin/ and kernels_src/)}
out=${OUT:-/tmp/flashlab-out}/traffic
mkdir -p "$out"
seqlens=${SEQLENS:-1024 2048 4096 8192 16384}
echo "family,seqlen,kernels,dram_read_bytes,dram_write_bytes,device_bytes" >"$out/traffic.csv"
for fam in ${FAMILIES:-naive fa1 fa2_sm80}; do
  for n in $seqlens; do
    log="$out/ncu_${fam}_${n}.csv"
    timeout ${NCU_TIMEOUT:-150} ncu --clock-control none --print-units base --csv \
      --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      "$here/bin/fa-bench" --family "$fam" --dtype bf16 --head-dim 128 --seqlen "$n" --causal no --launch-once \
      --csv "$out/alloc_${fam}_${n}.csv" >"$log" 2>&1
    rc=$?
    dev=$(python3 -c 'import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); print(r[0]["device_bytes"] if r else "")' "$out/alloc_${fam}_${n}.csv" 2>/dev/null)
    python3 - "$log" "$fam" "$n" "$dev" >>"$out/traffic.csv" <<'PY'
import csv, sys
path, fam, n, dev = sys.argv[1:5]
read = write = 0.0
kernels = set()
lines = [l for l in open(path, errors="replace") if l.startswith('"')]
for r in csv.DictReader(lines):
    try:
        v = float(r["Metric Value"].replace(",", ""))
    except (KeyError, ValueError):
        continue
    kernels.add(r.get("ID", ""))
    if r["Metric Name"] == "dram__bytes_read.sum":
        read += v
    elif r["Metric Name"] == "dram__bytes_write.sum":
        write += v
print(f"{fam},{n},{len(kernels)},{read:.0f},{write:.0f},{dev}")
PY
    echo "$fam n=$n ncu rc=$rc $(tail -n 1 "$out/traffic.csv")"
  done
done
