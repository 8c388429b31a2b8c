#!/usr/bin/env bash
# fa3_sm90_fp8: the Hopper FP8 forward (issue 15) on the H200: correctness at FP8 tolerances, speed beside
# our bf16 fa3_sm90 in the same call, the tile/overlap choices, and the GPU error study. One device call
# (~8 min):   bash scripts/gpu.sh experiment fa3_sm90_fp8
#             (or CARRY=.carry/gpu bash experiments/fa3_sm90_fp8/run.sh)
# Environment: SEQLENS (2048,8192,16384), HEAD_DIMS (64,128,256). PyTorch has no FP8 SDPA kernel on this
# machine: the published FA3 / cuDNN FP8 figures are quoted in README.md, marked as published.
set -uo pipefail
FL_COMMAND="$0${SEQLENS:+ SEQLENS=$SEQLENS}${HEAD_DIMS:+ HEAD_DIMS=$HEAD_DIMS}"
source "$(dirname "$0")/../lib.sh"
fl_init fa3_sm90_fp8
seqlens=${SEQLENS:-2048,8192,16384}
dims=${HEAD_DIMS:-64,128,256}
fl_step tests 240 "$fl_bin/test_kernels_src" "fa3_sm90 FP8*" -r console -d yes
for dtype in fp8_e4m3 bf16; do
  fl_step "bench_$dtype" 300 "$fl_bin/fa-bench" --family fa3_sm90 --dtype "$dtype" --head-dim "$dims" \
    --seqlen "$seqlens" --causal both --runs 20 --csv "bench_$dtype.csv"
done
# The choices behind the defaults (fa3_sm90.cpp, the grid's winners since 2026-12-04) against FA3's 128 x 128
# tile with ping-pong and O through P's buffer (the default before), and d256's smaller key block.
fl_step ablation_d128 90 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 --seqlen 8192 \
  --causal both --runs 20 --config kBlockN=128,kIntraWgOverlap=1,kPingPong=1,kSeparateO=0,kTransposeV=0 \
  --csv ablation_d128.csv
fl_step ablation_d256 90 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 256 --seqlen 8192 \
  --causal both --runs 20 --config kBlockN=64,kIntraWgOverlap=1 --csv ablation_d256.csv
fl_step per_block 90 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 --seqlen 8192 \
  --causal no --runs 20 --fp8-scaling per_block --fp8-block-rows 128 --csv per_block.csv
# Where V^T comes from (issue 15 item 2): the transpose launch (kTransposeV=0, the full masks' default), the
# producer (kTransposeV=1, the causal default at d64 and d128), or nowhere in the timed path: V handed over
# pre-transposed (--fp8-v-layout transposed, the forward alone). All three in 128-key blocks (d128 full's
# default 2 x 256 has no room for kTransposeV=1's staged tiles), d256 in 2 x 64 with overlap (its 2 x 128
# neither). Then the device quantisation: quantise + transpose launch + forward against quantise into V^T +
# forward.
for run in "rows 0" "rows 1" "transposed 0"; do
  read -r layout tv <<<"$run"
  fl_step "v_${layout}_tv$tv" 120 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 64,128 \
    --seqlen 8192 --causal both --runs 20 --fp8-v-layout "$layout" --config "kTransposeV=$tv,kBlockN=128" \
    --csv "v_${layout}_tv$tv.csv"
  fl_step "v_${layout}_tv${tv}_d256" 90 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 256 \
    --seqlen 8192 --causal both --runs 20 --fp8-v-layout "$layout" \
    --config "kTransposeV=$tv,kBlockN=64,kIntraWgOverlap=1" --csv "v_${layout}_tv${tv}_d256.csv"
done
for layout in rows transposed; do
  fl_step "v_${layout}_device" 120 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 \
    --seqlen 8192 --causal both --runs 20 --fp8-quantize device --fp8-v-layout "$layout" \
    --config kTransposeV=0 --csv "v_${layout}_device.csv"
done
fl_step error_study 240 "$fl_bin/fa-bench" --family fa3_sm90 --dtype fp8_e4m3 --head-dim 128 \
  --error-study error_study.csv
fl_sync
