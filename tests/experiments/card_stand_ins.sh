# Sourced by the tests of experiments/card_transfer's scripts (alternate_test.sh, clock_steps_test.sh).
# card_stand_ins DIR GPU_NAME writes stand-ins for what needs the GPU:
# - DIR/carry/bin/fa-bench notes its command line in DIR/carry/bin/calls, one line a call, and writes a CSV of
#   one row (TFLOP/s: the config's kBlockN, else 600) and a --samples CSV of one run; with kBlockN=0 it writes
#   nothing and fails.
# - DIR/path/nvidia-smi names GPU_NAME and samples a steady clock and power every 100 ms.
card_stand_ins() {
  local dir=$1 gpu=$2
  mkdir -p "$dir/carry/bin" "$dir/path"
  cat >"$dir/carry/bin/fa-bench" <<'STUB'
#!/usr/bin/env bash
echo "$*" >>"$(dirname "$0")/calls"
while [ $# -gt 0 ]; do
  case $1 in --config) config=$2 ;; --csv) csv=$2 ;; --samples) runs=$2 ;; esac
  shift
done
tflops=600
[[ $config == kBlockN=* ]] && tflops=${config#kBlockN=} && tflops=${tflops%%,*}
[ "$tflops" = 0 ] && exit 1
printf 'family,config,median_ms,p20_ms,p80_ms,tflops,passed\nfa3_sm90,"%s",1.5,1.4,1.6,%s,true\n' \
  "$config" "$tflops" >"$csv"
printf '%s\n%s\n' "family,config,dtype,mask,direction,seqlen,head_dim,run,input_set,ms,ended_utc" \
  "fa3_sm90,\"$config\",bf16,full,fwd,4096,64,0,0,1.5,2026-12-07T21:40:01.000250Z" >"$runs"
STUB
  cat >"$dir/path/nvidia-smi" <<STUB
#!/usr/bin/env bash
case "\$*" in
  *name,driver*) echo "$gpu, 580.159.04" ;;
  *name*) echo "$gpu" ;;
  *) while echo "\$(date -u '+%Y/%m/%d %H:%M:%S.%3N'), 1500 MHz, 2619 MHz, 300.0 W, 60"; do sleep 0.1; done ;;
esac
STUB
  chmod +x "$dir/carry/bin/fa-bench" "$dir/path/nvidia-smi"
}
