# Session 5, call 3: what the helpers landed, checked, then timed (the GPU alone for the timings).
# Tests: flash_decode's decode shapes (the LSE bound, 785dde2), fa3_sm90 FP8 with bf16 P.V (9a7aeeb), the
# device quantisation bit for bit (fp8q), fa-check --family (devlayer) and every family's defaults after
# the device/ move. Timings: FP8 plain vs bf16 P.V + the GPU error study, the bwd beside the peers' bwd
# (same call), the device quantisation again, the store-wait branch where it acts.
BUDGET=${BUDGET:-545}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s5call3 start"
OUT_SAVE=$OUT; export OUT=$L/gpu_tests
TESTS_ONLY=${TESTS_ONLY:-'flash_decode default configs are correct at decode shapes|fa3_sm90 FP8 with bf16 P.V|fp8_quantize on the GPU gives|fa3_sm90 FP8 quantised on the device|fa-check --family|every family.s default config is correct|fa3_sm90_bwd defaults are correct'} \
  TESTS_PARALLEL=7 TESTS_CPU=0 TESTS_BUDGET_S=${TESTS_BUDGET_S:-170} bash scripts/gpu.sh tests > "$L/tests.txt" 2>&1
export OUT=$OUT_SAVE
mkdir -p "$L/t" && tar xzf "$L/gpu_tests/tests.tgz" -C "$L/t" 2>/dev/null; C=$(ls "$L"/t/*/cases.txt "$L"/gpu_tests/tests/cases.txt 2>/dev/null | head -1)
log "tests: $(grep -c '^rc=0' "$C") passed of $(wc -l < "$C"); $(grep -v '^rc=0' "$C" | cut -f1,3 | tr '\n' '|')"
Q8="--family fa3_sm90 --runs 20 --dtype fp8_e4m3 --fp8-scaling per_block --fp8-block-rows 128 --incoherent --head-dim 128"
bench fp8_plain 50 $Q8 --seqlen 8192,16384 --causal both
bench fp8_bf16pv 50 $Q8 --seqlen 8192,16384 --causal both --fp8-pv bf16
timeout "$(cap 80)" "$B/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --fp8-pv bf16 --head-dim 128 --seqlen 2048,4096,8192,16384 --error-study "$L/fp8_bf16pv_error.csv" > "$L/fp8_bf16pv_error.txt" 2>&1; log "error study rc=$? $(wc -l < "$L/fp8_bf16pv_error.csv" 2>/dev/null) lines"
BW="--family fa3_sm90_bwd --direction bwd --runs 20"
bench bwd_bf16_n8192 60 $BW --dtype bf16 --head-dim 128,256 --seqlen 8192 --causal both
timeout "$(cap 60)" python3 experiments/peers/peers.py --bwd --dtype bf16 --head-dim 128,256 --seqlen 8192 --out "$L/peers_bwd_bf16.csv" > "$L/peers_bwd_bf16.txt" 2>&1; log "peers bwd rc=$? $(grep -c bwd "$L/peers_bwd_bf16.csv") bwd rows"
bench fp8q_device 40 $Q8 --seqlen 8192,16384 --causal no --fp8-quantize device
W="--config kBlockN=112,kConsumers=3,kIntraWgOverlap=1,kPersistent=2,kPingPong=1,kSeparateO=1,kStages=3"
bench fwd_winner_main 20 --family fa3_sm90 --runs 20 --dtype fp16 --head-dim 64 --seqlen 2048 --causal yes $W
FA_KERNELS_DIR=$PWD/.carry/session/kernels_storewait bench fwd_winner_storewait 20 --family fa3_sm90 --runs 20 --dtype fp16 --head-dim 64 --seqlen 2048 --causal yes $W
finish
cat "$L/summary.txt"
