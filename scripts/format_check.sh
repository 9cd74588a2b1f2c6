#!/usr/bin/env bash
# Checks that the tracked C/C++/CUDA sources are formatted as .clang-format says, with Debian's
# clang-format 14 (scripts/setup.sh installs it): `clang-format --dry-run --Werror` on each file,
# prints the files that would change and exits 1 if there is any. Changes nothing.
# Fix one with: clang-format-14 -i FILE
set -euo pipefail
cd "$(dirname "$0")/.."

cf=""
for c in clang-format-14 clang-format; do
  if command -v "$c" >/dev/null && "$c" --version | grep -q 'version 14\.'; then cf=$(command -v "$c"); break; fi
done
if [ -z "$cf" ]; then
  echo "format_check: clang-format 14 not found: run scripts/setup.sh (Debian package clang-format-14)" >&2
  exit 2
fi

# The co2asm fixtures are assembly, not C++; a tracked file deleted from the work tree is skipped.
mapfile -t files < <(git ls-files -- '*.cpp' '*.hpp' '*.h' '*.cu' '*.cuh' ':!:tests/co2asm/fixtures/**')
checked=0
bad=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  checked=$((checked + 1))
  if ! out=$("$cf" --dry-run --Werror "$f" 2>&1); then
    bad+=("$f")
    echo "$f: $(grep -c ': error: ' <<<"$out") place(s) differ from .clang-format"
  fi
done
if ((${#bad[@]})); then
  echo "[format] ${#bad[@]} of $checked files are not formatted (${cf##*/} --dry-run --Werror); fix: ${cf##*/} -i FILE"
  exit 1
fi
echo "[format] $checked files formatted"
