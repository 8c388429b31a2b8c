#!/usr/bin/env bash
# The figures a newcomer sees, for a tree (default: this checkout): repeated code (`duplicates`: pairs, and
# the lines of the named run of each pair), source files over 300 lines, arrows running up the layers
# (scripts/layers.py), and lines of README.md outside experiments/.
#   usage: scripts/tree-figures.sh [DIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=${1:-$(cd "$here/.." && pwd)}
cd "$tree"
if command -v duplicates >/dev/null; then
  duplicates --most 200 --seconds 120 | awk '
    NR == 1 { pairs = $1 }
    /^D[0-9]+ / { split($2, a, ":"); split(a[2], r, "-"); lines += r[2] - r[1] + 1 }
    END { printf "duplicates: %d pairs, %d lines (the named run of each pair)\n", pairs, lines }'
else
  echo "duplicates: not installed"
fi
files=$( (git ls-files 2>/dev/null || find . -type f) | grep -E '\.(cpp|hpp|h|cu|cuh|py|sh)$' |
  grep -v '^\./build')
echo "source files over 300 lines: $(for f in $files; do [ -f "$f" ] && [ "$(wc -l <"$f")" -gt 300 ] &&
  echo "$f"; done | wc -l)" \
  "of $(echo "$files" | wc -l)"
python3 "$here/layers.py" --repo "$tree" --count
readmes=$( (git ls-files 2>/dev/null || find . -name README.md) | grep 'README.md$' |
  grep -Ev '^(\./)?experiments/')
echo "README lines outside experiments/: $(cat $readmes | wc -l) in $(echo "$readmes" | wc -l) files"
