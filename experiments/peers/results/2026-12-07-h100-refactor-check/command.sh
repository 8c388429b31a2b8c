# Session 25 H100 check: peers.py before (the committed version, copied to peers_before.py) and after its
# refactor into small functions, the same arguments each; then fa-tune's progress line on two problems.
set -u
for v in peers_before peers; do
  timeout 120 python3 experiments/peers/$v.py --out $OUT/$v.csv --dtype bf16 --head-dim 64 --seqlen 2048 \
    --bwd --memory --backends flash,cudnn,math > $OUT/$v.txt 2>&1; echo "$v timed rc=$?"
  timeout 60 python3 experiments/peers/$v.py --out $OUT/${v}_mem.csv --dtype fp16 --head-dim 128 --seqlen 1024 \
    --bwd --memory-only --batch 1 --heads 16 >> $OUT/$v.txt 2>&1; echo "$v memory-only rc=$?"
  timeout 60 python3 experiments/peers/$v.py --out $OUT/${v}_fail.csv --dtype bf16 --head-dim 512 --seqlen 1024 \
    --bwd --backends flash,math >> $OUT/$v.txt 2>&1; echo "$v d512 rc=$?"
done
export LD_LIBRARY_PATH=/usr/local/cuda/lib64 XDG_CACHE_HOME=/tmp/s25-cache FA_KERNELS_DIR=$PWD/.carry/grid/kernels_src
timeout 200 .carry/grid/bin/fa-tune --family fa3_sm90 --head-dim 64,128 --seqlen 2048 --causal no \
  --strategy random --budget 10 --db /tmp/s25.sqlite > $OUT/fa-tune.txt 2>&1; echo "fa-tune rc=$?"
grep -i "best" $OUT/fa-tune.txt | tail -8
tail -4 $OUT/peers_before.txt $OUT/peers.txt
