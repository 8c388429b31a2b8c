# Session 5, call 2: timings, the GPU alone, one after another (fa-bench --runs 20 checks each shape first).
# #10: one timing row of main's fa3_sm90 (d128 bf16 n8192 + fp16 d64 n2048) and the kSeparateO store-wait
# branch against it, beside the peers. #11: fa2_sm80 / fa2_fp8 d256 with 8ead283's kernels_src (before the
# kernel parts) and main's. #16: the bwd bulk dQ causal, d256 one stage + bulk, fp16 d128; ncu on the d128
# bwd. #15: FP8 quantised on the device vs on the host.
BUDGET=${BUDGET:-555}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "s5call2 start"
FW="--family fa3_sm90 --runs 20"; BW="--family fa3_sm90_bwd --direction bwd --runs 20"
SW=$PWD/.carry/session/kernels_storewait; PK=$PWD/.carry/session/kernels_pre_kparts
bench fwd_main_bf16_d128 35 $FW --dtype bf16 --head-dim 128 --seqlen 8192 --causal both
bench fwd_main_fp16_d64c 25 $FW --dtype fp16 --head-dim 64 --seqlen 2048 --causal yes
FA_KERNELS_DIR=$SW bench fwd_storewait_fp16_d64c 25 $FW --dtype fp16 --head-dim 64 --seqlen 2048 --causal yes
FA_KERNELS_DIR=$SW bench fwd_storewait_fp16_d64f 25 $FW --dtype fp16 --head-dim 64 --seqlen 2048 --causal no
bench fwd_main_fp16_d64f 25 $FW --dtype fp16 --head-dim 64 --seqlen 2048 --causal no
timeout "$(cap 60)" python3 experiments/peers/peers.py --dtype bf16 --head-dim 128 --seqlen 8192 --out "$L/peers_bf16_d128.csv" > "$L/peers_bf16_d128.txt" 2>&1; log "peers bf16 d128 rc=$?"
timeout "$(cap 60)" python3 experiments/peers/peers.py --dtype fp16 --head-dim 64 --seqlen 2048 --out "$L/peers_fp16_d64.csv" > "$L/peers_fp16_d64.txt" 2>&1; log "peers fp16 d64 rc=$?"
# #11 before/after (d256 defaults differ in SASS)
for f in fa2_sm80; do
  FA_KERNELS_DIR=$PK bench ${f}_d256_before 40 --family $f --runs 20 --dtype bf16 --head-dim 256 --seqlen 4096 --causal both
  bench ${f}_d256_after 40 --family $f --runs 20 --dtype bf16 --head-dim 256 --seqlen 4096 --causal both
done
FA_KERNELS_DIR=$PK bench fa2_fp8_d256_before 40 --family fa2_fp8 --runs 20 --dtype fp8_e4m3 --head-dim 256 --seqlen 4096 --causal both
bench fa2_fp8_d256_after 40 --family fa2_fp8 --runs 20 --dtype fp8_e4m3 --head-dim 256 --seqlen 4096 --causal both
# #16
bench bwd_d128c_dq2 35 $BW --dtype bf16 --head-dim 128 --seqlen 8192 --causal yes
bench bwd_d128c_dq0 35 $BW --dtype bf16 --head-dim 128 --seqlen 8192 --causal yes --config kDqMode=0
bench bwd_d256_def 40 $BW --dtype bf16 --head-dim 256 --seqlen 8192 --causal both
bench bwd_d256_s1bulk 40 $BW --dtype bf16 --head-dim 256 --seqlen 8192 --causal both --config kBlockM=64,kBlockN=64,kConsumers=2,kStages=1,kDqMode=2
bench bwd_fp16_d128 40 $BW --dtype fp16 --head-dim 128 --seqlen 2048,8192 --causal no
timeout "$(cap 60)" ncu --clock-control none --kernel-name regex:fa3_sm90_bwd --launch-skip 12 --launch-count 1 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section Occupancy "$B/fa-bench" $BW --dtype bf16 --head-dim 128 --seqlen 8192 --causal no > "$L/ncu_bwd_d128.txt" 2>&1; log "ncu bwd rc=$? $(grep -E 'Compute \(SM\) Throughput|Memory Throughput' "$L/ncu_bwd_d128.txt" | tr -s ' ' | tr '\n' '|')"
# #15: device vs host quantisation, per-block 128 rows + rotation
Q8="--family fa3_sm90 --runs 20 --dtype fp8_e4m3 --fp8-scaling per_block --fp8-block-rows 128 --incoherent --head-dim 128,256 --seqlen 8192,16384 --causal both"
bench fp8_quant_device 80 $Q8 --fp8-quantize device
bench fp8_quant_host 80 $Q8 --fp8-quantize host
finish
cat "$L/summary.txt"
