# Session 6, call 5: issue 14 item 2 again on the device, after fa-tune restarts itself on a sticky fault
# (tuner/tune/fault_restart.hpp): the same fault demo as call 3 (crashing compiles on 64x32 4-warp 2-stage,
# illegal address on 8-warp 3-stage), expected now to finish the space in one command.
BUDGET=${BUDGET:-200}
source .carry/session/lib.sh
log "s6call5 start"
source .carry/session/fault_demo.sh
fault_demo 170
grep -c "starting fa-tune again" "$L/fault/run1.err" | sed 's/^/restarts: /' | tee -a "$L/summary.txt"
finish
cat /tmp/s-done/summary.txt
