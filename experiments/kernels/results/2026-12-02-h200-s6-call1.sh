# Session 6 (2026-12-02), call 1: issue 16's headline backward table in bf16 (fa3_sm90_bwd defaults at d
# 64/128/256, n 1024..16384, both masks, beside PyTorch's FlashAttention-2 and cuDNN backward in the same
# call), then issue 17's speed_vs_n at d 128 (fa2_sm80 and fa3_sm90 forwards, PyTorch's math, FA2 and
# cuDNN with memory): experiments/PLAN.md's call 1.
BUDGET=${BUDGET:-575}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s6call1 start"
STEPS=bench DTYPES=bf16 bash scripts/gpu.sh experiment fa3_sm90_bwd > "$L/bwd_bf16.txt" 2>&1
log "fa3_sm90_bwd bench bf16 rc=$? $(tail -n 3 "$OUT/fa3_sm90_bwd.summary.txt" | tr '\n' '|')"
snap
HEAD_DIMS=128 FWD_FAMILIES="fa2_sm80 fa3_sm90" BWD_FAMILIES="" LONG_SEQLENS="" timeout "$(cap 400)" \
  bash scripts/gpu.sh experiment speed_vs_n > "$L/speed_vs_n.txt" 2>&1
log "speed_vs_n d128 rc=$? $(grep '^step' "$OUT/speed_vs_n.summary.txt" | cut -c1-90 | tr '\n' '|')"
finish
cat "$L/summary.txt"
