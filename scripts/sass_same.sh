#!/usr/bin/env bash
# Are two cubins the same machine code? Compares every SASS instruction of the two (cuobjdump -sass, addresses and
# encodings stripped, each file's own kernel names replaced by KERNEL), so a rebuild under another name or a
# refactor can be checked instruction for instruction. The evidence behind "SASS unchanged" in docs/PERF.md.
# Usage: scripts/sass_same.sh A.cubin B.cubin   (exit 0: same, 1: different with a diff summary, 2: bad input)
# Sessions before 12 matched instruction addresses with a 4-hex-digit pattern, which stops at 4096 instructions;
# session 12 re-checked those claims with this script (docs/PERF.md entry 33).
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "sass_same.sh: usage: scripts/sass_same.sh A.cubin B.cubin: pass two cubins" >&2
    exit 2
fi
for f in "$1" "$2"; do
    [ -f "$f" ] || { echo "sass_same.sh: no file $f: pass two cubins (build/kernels/sm90a/*.cubin)" >&2; exit 2; }
done
command -v cuobjdump > /dev/null || { echo "sass_same.sh: cuobjdump not found: put the CUDA toolkit's bin on PATH" >&2; exit 2; }
sass() {
    local out names
    out=$(cuobjdump -sass "$1" 2>&1) || { echo "sass_same.sh: cuobjdump cannot read $1 (${out%%$'\n'*}): pass a cubin" >&2; return 2; }
    names=$(printf '%s\n' "$out" | sed -n 's/^[[:space:]]*Function : //p' | sort -u)
    [ -n "$names" ] || { echo "sass_same.sh: $1 holds no SASS function: pass a cubin built for an sm_ target" >&2; return 2; }
    printf '%s\n' "$out" | grep -E '^[[:space:]]+/\*[0-9a-f]+\*/' | sed -E 's#/\*[0-9a-f]+\*/##; s# */\* 0x[0-9a-f]+ \*/##; s/[[:space:]]+/ /g' |
        awk -v names="$names" 'BEGIN { n = split(names, k, "\n") } { for (i = 1; i <= n; ++i) gsub(k[i], "KERNEL"); print }'
}
a=$(sass "$1") || exit 2
b=$(sass "$2") || exit 2
if [ "$a" = "$b" ]; then
    echo "same: $(printf '%s\n' "$a" | wc -l) instructions"
    exit 0
fi
echo "different: $(printf '%s\n' "$a" | wc -l) and $(printf '%s\n' "$b" | wc -l) instructions, $(diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | grep -c '^<') lines of $1 differ"
exit 1
