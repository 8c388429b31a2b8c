# Recipe `fp8` (sourced by scripts/gpu.sh): the FP8 forward (fa2_fp8), every step with its own limit and log,
# ~4-5 minutes in all:
#   1. how sm_90 lowers mma.sync m16n8k32 e4m3 (nvcc + cuobjdump on a one-instruction kernel: QMMA, or
#      F2FP conversions + HMMA) -- the reason the 1.3x target is or is not reachable
#   2. the [fp8] tests: [gpu] (default configs x every input family x edge problems, fa-check) and the
#      hidden full-space NVRTC compile for sm_89 and sm_90a at d 64/128
#   3. fa-bench --check-only over every input family's edge problems: default config, d 64/128, causal
#      and not, e4m3 per tensor, e4m3 per block, e4m3 incoherent, e5m2
#   4. timing: fa2_fp8 e4m3 next to fa2_sm80 bf16, headline shapes, n 512..16384, d 64/128/256, causal and
#      not, in the same run; ratio table
#   5. compute-sanitizer memcheck and racecheck on one small config
#   6. the error study: RMSE of O over experiments/fp8_error_analysis's inputs/rows/variants (CSV)
gpu_line
# 1. SASS of one FP8 mma.sync for sm_90a and sm_89.
cat >"$dir/mma_e4m3.cu" <<'EOF'
__global__ void k(float* d, const unsigned* a, const unsigned* b) {
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
               "{%0,%1,%2,%3};\n"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  for (int i = 0; i < 4; ++i) d[threadIdx.x * 4 + i] = c[i];
}
EOF
for arch in sm_90a sm_89; do
  if timeout 60 nvcc -cubin -arch=$arch -o "$dir/mma_$arch.cubin" "$dir/mma_e4m3.cu" 2>"$dir/mma_$arch.err" &&
    cuobjdump -sass "$dir/mma_$arch.cubin" >"$dir/mma_$arch.sass" 2>&1; then
    note "SASS of one mma.sync e4m3 for $arch: $(grep -c QMMA "$dir/mma_$arch.sass") QMMA, \
$(grep -c HMMA "$dir/mma_$arch.sass") HMMA, $(grep -c F2FP "$dir/mma_$arch.sass") F2FP, \
$(grep -cE 'PRMT|I2F|F2F' "$dir/mma_$arch.sass") PRMT/I2F/F2F"
  else
    note "SASS check for $arch: nvcc or cuobjdump unavailable ($(head -c 200 "$dir/mma_$arch.err"))"
  fi
done

# 2. [fp8] tests: the GPU check and the full-space compile (NVRTC on this machine's cores).
timeout 150 "$bin/test_kernels_src" "[gpu][fp8]" -r compact >"$dir/test_fp8_gpu.txt" 2>&1
note "test_kernels_src [gpu][fp8] rc=$? $(last_line "$dir/test_fp8_gpu.txt")"
timeout 200 "$bin/test_kernels_src" "[fp8][space]" -r compact >"$dir/test_fp8_space.txt" 2>&1
note "test_kernels_src [fp8][space] (every config, sm_89 + sm_90a, d 64/128) rc=$? \
$(last_line "$dir/test_fp8_space.txt")"
timeout 100 "$bin/test_tuner" "[fp8]" -r compact >"$dir/test_tuner_fp8.txt" 2>&1
note "test_tuner [fp8] rc=$? $(last_line "$dir/test_tuner_fp8.txt")"
timeout 100 "$bin/test_device" "[fp8]" -r compact >"$dir/test_device_fp8.txt" 2>&1
note "test_device [fp8] (the FP8 problems and family rules, device/) rc=$? \
$(last_line "$dir/test_device_fp8.txt")"

# 3. fa-check through fa-bench: edge problems (odd n, n_q != n_k, GQA) and one timed shape, per variant.
check() {  # name, extra fa-bench options
  local name=$1
  shift
  timeout 120 "$bin/fa-bench" --family fa2_fp8 --head-dim 64,128 --seqlen 1024 --causal both --check-only \
    "$@" >"$dir/check_$name.txt" 2>&1
  note "fa-bench --check-only $name rc=$? $(grep -c ' pass' "$dir/check_$name.txt") pass, \
$(grep -c 'FAIL' "$dir/check_$name.txt") FAIL"
}
check e4m3 --dtype fp8_e4m3
check e4m3_block --dtype fp8_e4m3 --fp8-scaling per_block --fp8-block-rows 64
check e4m3_incoherent --dtype fp8_e4m3 --incoherent
check e5m2 --dtype fp8_e5m2
grep -h "FAIL" "$dir"/check_*.txt | head -5 >>"$dir/summary.txt"

# 4. Timing, both families in this run, same shapes and protocol.
shapes=(--head-dim 64,128,256 --seqlen 512,1024,2048,4096,8192,16384 --causal both --runs 20 --warmup 3)
timeout 200 "$bin/fa-bench" --family fa2_fp8 --dtype fp8_e4m3 "${shapes[@]}" --csv "$dir/fp8_bench.csv" \
  >"$dir/bench_fp8.txt" 2>&1
note "fa-bench fa2_fp8 e4m3 rc=$?"
timeout 200 "$bin/fa-bench" --family fa2_sm80 --dtype bf16 "${shapes[@]}" --csv "$dir/bf16_bench.csv" \
  >"$dir/bench_bf16.txt" 2>&1
note "fa-bench fa2_sm80 bf16 rc=$?"
if [ -s "$dir/fp8_bench.csv" ] && [ -s "$dir/bf16_bench.csv" ]; then
  python3 - "$dir/fp8_bench.csv" \
    "$dir/bf16_bench.csv" <<'EOF' | tee "$dir/fp8_vs_bf16.txt" >>"$dir/summary.txt"
import csv, sys
def load(path):
    rows = {}
    for r in csv.DictReader(open(path)):
        keys = {k.lower(): v for k, v in r.items()}
        key = (keys.get("head_dim") or keys.get("d"), keys.get("causal") or keys.get("mask"), keys.get("n") or keys.get("seqlen"))
        rows[key] = float(keys.get("tflops") or keys.get("tflop/s") or 0)
    return rows
fp8, bf16 = load(sys.argv[1]), load(sys.argv[2])
print("d    mask    n      fp8 TFLOP/s  bf16 TFLOP/s  fp8/bf16 (target 1.3)")
for key in sorted(fp8, key=lambda k: (int(k[0] or 0), str(k[1]), int(k[2] or 0))):
    b = bf16.get(key, 0)
    print(f"{key[0]:<4} {key[1]:<7} {key[2]:<6} {fp8[key]:11.1f}  {b:12.1f}  {fp8[key] / b if b else float('nan'):8.2f}")
EOF
fi

# 5. compute-sanitizer on one small config (edge problems + one n = 512 shape).
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$bin/fa-bench" --family fa2_fp8 \
    --dtype fp8_e4m3 --head-dim 64 --seqlen 512 --causal yes --check-only >"$dir/sanitizer_$tool.txt" 2>&1
  note "compute-sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' \
    "$dir/sanitizer_$tool.txt" | tail -n 1)"
done

# 6. Error study: rows for experiments/fp8_error_analysis (method gpu, source = device + family + config).
timeout 200 "$bin/fa-bench" --family fa2_fp8 --head-dim 64,128,256 --seqlen 512,1024,2048,4096,8192,16384 \
  --error-study "$dir/fp8_error_gpu.csv" >"$dir/error_study.txt" 2>&1
note "fa-bench --error-study rc=$? $(($(wc -l <"$dir/fp8_error_gpu.csv" 2>/dev/null || echo 1) - 1)) rows"

