# Session 5, call 4 (the last minutes): flash_decode's d256 sections under the new LSE bound, and FP8 bf16 P.V
# against plain FP8 on the causal mask (call 3's step limit cut them).
BUDGET=${BUDGET:-270}
source .carry/session/lib.sh
log "s5call4 start"
for s in "d256 bf16" "d256 fp16"; do
  ( timeout "$(cap 200)" "$B/test_kernels_src" "flash_decode default configs are correct at decode shapes" -c "$s" -r compact > "$L/decode_${s// /_}.txt" 2>&1; log "flash_decode $s rc=$? $(tail -n 1 "$L/decode_${s// /_}.txt")" ) &
done
wait
Q8="--family fa3_sm90 --runs 20 --dtype fp8_e4m3 --fp8-scaling per_block --fp8-block-rows 128 --incoherent --head-dim 128 --seqlen 8192 --causal yes"
bench fp8_plain_causal 25 $Q8
bench fp8_bf16pv_causal 25 $Q8 --fp8-pv bf16
finish
cat "$L/summary.txt"
