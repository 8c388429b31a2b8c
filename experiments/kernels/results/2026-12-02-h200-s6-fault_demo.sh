# Issue 14 item 2 on the real device: fa-tune over fa2_sm80's d128 space with (a) a compile worker that
# dies by SIGSEGV on the configs kBlockM 64, kBlockN 32, 4 warps, 2 stages (tests/support/
# crashing_compile_worker.cpp: the real protocol and NVRTC otherwise; the stand-in for NVRTC 13.0's
# segfault on some inline PTX) and (b) kernels whose 8-warp 3-stage configs write to address 16 (a sticky
# CUDA_ERROR_ILLEGAL_ADDRESS). Expected: the run ends with a winner, the crashed configs stored as compile
# failures naming the signal, the faulting ones as failed with the error, and a rerun on the same database
# compiles nothing again (the worker log does not grow).
# Usage (sourced after lib.sh): fault_demo LIMIT_S
fault_demo() {
  local k=/tmp/kernels_fault d=$L/fault
  mkdir -p "$d"; rm -rf "$k"; cp -r "$FA_KERNELS_DIR" "$k"
  python3 - "$k/fa2_sm80_fwd.cu" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
anchor = "  extern __shared__ __align__(128) unsigned char smem[];\n  using Cfg = fa2::FwdConfig"
assert anchor in s
s = s.replace(anchor, "  extern __shared__ __align__(128) unsigned char smem[];\n"
  "  if constexpr (kNWarps == 8 && kStages == 3) {  // injected fault (session 6 demo)\n"
  "    if (threadIdx.x == 0) *reinterpret_cast<int volatile*>(16) = 1;\n  }\n"
  "  using Cfg = fa2::FwdConfig", 1)
open(p, "w").write(s)
PY
  local args=(--arch sm90 --family fa2_sm80 --dtype bf16 --head-dim 128 --seqlen 2048 --causal no
    --strategy exhaustive --pace fast --kernels-dir "$k" --db "$d/fault.sqlite")
  export FA_COMPILE_WORKER=$B/test_crashing_compile_worker FL_TEST_CRASH_ON=", 128, 64, 32, 4, 2," FL_TEST_WORKER_LOG=$d/worker.log
  timeout "$(cap "$1")" "$B/fa-tune" "${args[@]}" --json "$d/run1.json" --export-measurements "$d/run1.tsv" > "$d/run1.txt" 2> "$d/run1.err"
  log "fault demo run 1 rc=$? worker starts $(wc -l < "$d/worker.log"); $(grep -E 's wall|^fa2_sm80 ' "$d/run1.txt" | cut -c1-220 | tr '\n' '|')"
  [ "$(left)" -gt 30 ] || return 0
  local before; before=$(wc -l < "$d/worker.log")
  timeout "$(cap 40)" "$B/fa-tune" "${args[@]}" > "$d/run2.txt" 2> "$d/run2.err"
  log "fault demo rerun rc=$? worker starts +$(( $(wc -l < "$d/worker.log") - before )); $(grep -E 's wall|^fa2_sm80 ' "$d/run2.txt" | cut -c1-220 | tr '\n' '|')"
  log "fault demo: $(grep -ciE 'SIGSEGV|signal' "$d/run1.tsv") rows name the signal, $(grep -ci 'ILLEGAL_ADDRESS' "$d/run1.tsv") the illegal address"
  unset FA_COMPILE_WORKER FL_TEST_CRASH_ON FL_TEST_WORKER_LOG
}
