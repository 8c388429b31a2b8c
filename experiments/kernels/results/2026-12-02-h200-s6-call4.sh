# Session 6, call 4: issue 16's headline backward table in fp16 (the bf16 one is call 1's), beside
# PyTorch's FlashAttention-2 and cuDNN backward in the same call.
BUDGET=${BUDGET:-330}
source .carry/session/lib.sh
log "s6call4 start"
OUT=$L/bwd STEPS=bench DTYPES=fp16 timeout "$(cap 320)" bash scripts/gpu.sh experiment fa3_sm90_bwd > "$L/bwd_fp16.txt" 2>&1
log "fa3_sm90_bwd bench fp16 rc=$? $(tail -n 1 "$L/bwd/fa3_sm90_bwd.summary.txt")"
finish
