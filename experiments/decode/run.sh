#!/usr/bin/env bash
# decode: one query row (and 2-16) against long KV caches, PyTorch's FlashAttention-2, cuDNN and math
# backends (decode.py), with this GPU's copy bandwidth (io_traffic/ceilings.py) as the ceiling. Our
# split-KV family (Flash-Decoding) is not built yet: when it exists, add its fa-bench step here.
# One device call, ~3 min:   CARRY=.carry/gpu bash experiments/decode/run.sh
# Environment: BATCH (1), HEADS (16), NQ (1,2,4,8,16), NK (4096,...,131072).
set -uo pipefail
FL_COMMAND="$0${BATCH:+ BATCH=$BATCH}${HEADS:+ HEADS=$HEADS}"
source "$(dirname "$0")/../lib.sh"
fl_init decode
fl_step ceilings 120 python3 "$fl_here/../io_traffic/ceilings.py" --out ceilings.csv
for b in ${BATCH:-1 8}; do
  fl_step "decode_b$b" 300 python3 "$fl_here/decode.py" --batch "$b" --heads "${HEADS:-16}" \
    --nq "${NQ:-1,2,4,8,16}" --nk "${NK:-4096,8192,16384,32768,65536,131072}" --out "decode_b$b.csv"
done
fl_sync
fl_plot
