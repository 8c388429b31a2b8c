#!/usr/bin/env bash
# Runs `bash scripts/gpu.sh experiment QUESTION` for each QUESTION (or `bash scripts/gpu.sh RECIPE` for
# recipe:RECIPE) on a fake carry, here, without a GPU: the layout scripts/build-portable.sh makes
# (.carry/gpu/bin with every binary of BUILD_BIN, kernels_src), a copy of the tree as the device gets it,
# and stubs for what needs the GPU: every carried binary but fa-explain (which runs for real) and the fa-*
# commands (which judge their command lines for real); nvidia-smi, ncu, compute-sanitizer, cuobjdump; the
# Python scripts that import torch when there is no torch. It proves the paths, not the results (an output
# a stub did not write is no failure): it fails when a script calls a binary, script or file the carry
# layout does not have (exit 126/127, "No such file", "command not found", "can't open file"), passes
# options a command refuses (exit 2), or leaves $OUT empty.
# Usage: tests/experiments/fake_carry.sh BUILD_BIN QUESTION|recipe:RECIPE...
set -uo pipefail
build_bin=$(cd "${1:?BUILD_BIN (build/bin)}" && pwd)
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
[ -n "${FAKE_CARRY_KEEP:-}" ] && echo "fake carry: $work (kept)" || trap 'rm -rf "$work"' EXIT

# The device's copy of the tree (tracked files only, as a device call copies the working tree) ...
tree=$work/tree
mkdir -p "$tree"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
  xargs -0 cp --parents -t "$tree" 2>/dev/null)
# ... and the carry inside it.
carry=$tree/.carry/gpu
mkdir -p "$carry/bin"
cp -r "$repo/kernels_src" "$carry/kernels_src"
calls=$work/calls.log
stub() {  # stub PATH: logs its command line and exits 0 (writes nothing: the results are not the point)
  printf '#!/usr/bin/env bash\necho "$(basename "$0") $*" >>%q\n' "$calls" >"$1"
  chmod +x "$1"
}
# A command's own checks run for real: each fa-* stub runs the real binary for up to 3 s, which judges its
# command line before it asks for the GPU (no GPU: exit 3; still working after 3 s: the options passed);
# exit 2 means the run script passes options the command refuses.
judged() {  # judged NAME
  stub "$carry/bin/$1"
  cat >>"$carry/bin/$1" <<EOF
timeout 3 "$build_bin/$1" "\$@" >/dev/null 2>"$work/last.err"
[ \$? -eq 2 ] && echo "$1 refused its arguments (exit 2): \$(head -n 1 "$work/last.err")" >&2
exit 0
EOF
}
for exe in "$build_bin"/*; do
  [ -x "$exe" ] && [ -f "$exe" ] || continue
  name=$(basename "$exe")
  case $name in
    fa-explain) cp "$exe" "$carry/bin/" ;;
    fa-compile-worker) stub "$carry/bin/$name" ;;
    fa-*) judged "$name" ;;
    *) stub "$carry/bin/$name" ;;
  esac
done
# The GPU machine's own tools. ncu and compute-sanitizer run the command they profile (after their options).
fakes=$work/path
mkdir -p "$fakes"
stub "$fakes/cuobjdump"
printf '#!/usr/bin/env bash\necho "NVIDIA H200 (fake), 580.00, 1980 MHz, 143771 MiB"\n' >"$fakes/nvidia-smi"
for tool in ncu compute-sanitizer; do
  cat >"$fakes/$tool" <<'EOF'
#!/usr/bin/env bash
while [ $# -gt 0 ] && [ ! -x "$1" ]; do shift; done
[ $# -gt 0 ] || { echo "fake profiler: no command to run" >&2; exit 2; }
exec "$@"
EOF
done
real_python=$(command -v python3)
cat >"$fakes/python3" <<EOF
#!/usr/bin/env bash
# A script that imports torch is only checked to exist when there is no torch here.
if [ -f "\${1:-}" ] && grep -q '^import torch\|^from torch' "\$1" && \
! "$real_python" -c 'import torch' 2>/dev/null; then
  echo "python3 \$*" >>"$calls"
  exit 0
fi
[ -n "\${1:-}" ] && [ "\${1#-}" = "\$1" ] && [ ! -f "\$1" ] && \
{ echo "python3: can't open file '\$1'" >&2; exit 2; }
exec "$real_python" "\$@"
EOF
chmod +x "$fakes"/*

status=0
for question in "$@"; do
  # "recipe:NAME" runs scripts/gpu.sh NAME (scripts/gpu/NAME.sh) instead of an experiment.
  case $question in
    recipe:*) args=("${question#recipe:}") ;;
    *) args=(experiment "$question") ;;
  esac
  out=$work/out/${question#recipe:}
  mkdir -p "$out"
  log=$work/${question#recipe:}.log
  (cd "$tree" && PATH="$fakes:$PATH" OUT="$out" FL_WORK="$work/flwork" FA_BUILT_IN="$work/built_in" \
    bash scripts/gpu.sh "${args[@]}") >"$log" 2>&1
  rc=$?
  # Every log the steps wrote (an experiment's work folder, a recipe's $OUT), beside the script's own output.
  found=$(cat "$log" $(find "$work/flwork/$question" -name '*.log' 2>/dev/null) \
    $(find "$out" -type f \( -name '*.txt' -o -name '*.log' \) 2>/dev/null) 2>/dev/null |
    grep -E "No such file or directory|command not found|can't open file|failed to run command|\
rc=12[67]|refused its arguments" |
    grep -v -F -e "$work/out/" -e "$work/flwork/" -e "results.csv" -e ".csv'" -e ".json'" | head -n 5)
  made=$(ls "$out" 2>/dev/null | tr '\n' ' ')
  if [ -n "$found" ] || [ -z "$made" ]; then
    echo "FAIL $question (rc $rc; \$OUT: ${made:-empty}):"
    echo "$found" | sed 's/^/    /'
    status=1
  else
    echo "ok   $question (rc $rc; \$OUT: $made; $(grep -c . "$calls" 2>/dev/null ||
      echo 0) stubbed calls so far)"
  fi
done
exit $status
