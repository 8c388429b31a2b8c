# Session 7 (2026-12-02): experiments/PLAN.md's calls 2 and 3 in one device call (issue 17): speed_vs_n at
# d 128 for naive (tensor-core GEMMs) and fa1 forwards and the fa2_sm80 and fa1 backwards; then
# recomputation (stored vs recomputed P) and memory_vs_n. Each step resumable; timeouts keep the call
# under its 10 minutes (a cut step says so in its summary).
BUDGET=${BUDGET:-580}
source .carry/session/lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee -a "$L/summary.txt"
log "plan23 start"
HEAD_DIMS=128 FWD_FAMILIES="naive fa1" BWD_FAMILIES="fa2_sm80_bwd fa1_bwd" LONG_SEQLENS="" PEERS="" \
  timeout "$(cap 330)" bash scripts/gpu.sh experiment speed_vs_n > "$L/speed_vs_n.txt" 2>&1
log "speed_vs_n rc=$? $(grep '^step' "$OUT/speed_vs_n.summary.txt" | cut -c1-90 | tr '\n' '|')"
snap
timeout "$(cap 150)" bash scripts/gpu.sh experiment recomputation > "$L/recomputation.txt" 2>&1
log "recomputation rc=$? $(grep '^step' "$OUT/recomputation.summary.txt" | cut -c1-90 | tr '\n' '|')"
snap
timeout "$(cap 200)" bash scripts/gpu.sh experiment memory_vs_n > "$L/memory_vs_n.txt" 2>&1
log "memory_vs_n rc=$? $(grep '^step' "$OUT/memory_vs_n.summary.txt" | cut -c1-90 | tr '\n' '|')"
finish
cat /tmp/s-done/summary.txt
