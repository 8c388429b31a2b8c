# Recipe `sanitizers` (sourced by scripts/gpu.sh): compute-sanitizer memcheck and racecheck on one small
# checked config of every family (fa-bench --check-only: its awkward edge problems plus b1 h2 n300, causal;
# racecheck is slow, so the problems stay tiny). A hazard or an error exits 9 under --error-exitcode.
# flash_decode runs decode problems only (n_q <= 128 query rows, device/families/flash_decode.cpp's
# kMaxQueryRows): it gets 16 query rows against the 300 keys, so that its split-KV merge is exercised.
gpu_line
failed=0
sanitize() {  # family direction timeout
  local fam=$1 direction=$2 limit=$3 tool rows=()
  [ "$fam" = flash_decode ] && rows=(--seqlen-q 16)
  for tool in memcheck racecheck; do
    local log="$dir/${fam}_$tool.txt"
    timeout "$limit" compute-sanitizer --tool $tool --error-exitcode 9 "$bin/fa-bench" --family "$fam" \
      --direction "$direction" --head-dim 64 --seqlen 300 --batch 1 --heads 2 --causal yes "${rows[@]}" \
      --check-only >"$log" 2>&1
    local rc=$?
    note "$fam $tool rc=$rc $(grep -m1 'ERROR SUMMARY\|RACECHECK SUMMARY' "$log")"
    [ $rc -eq 0 ] || failed=$((failed + 1))
  done
}
for fam in ${FAMILIES_FWD:-naive fa1 fa2_sm80}; do sanitize "$fam" fwd "${SANITIZER_TIMEOUT:-80}"; done
for fam in ${FAMILIES_BWD:-fa2_sm80_bwd fa1_bwd}; do sanitize "$fam" bwd "${SANITIZER_TIMEOUT_BWD:-120}"; done
note "sanitizers: $failed run(s) failed"
[ $failed -eq 0 ]
