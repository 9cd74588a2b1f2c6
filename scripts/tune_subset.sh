#!/usr/bin/env bash
# Tune a chosen set of kernels, shipped or dev ladder, on the GPU machine: a restricted manifest directory (the
# rows of build/kernels/sm90a's shipped and dev manifests whose kernel name matches REGEX, the cubins linked
# beside it) handed to `f4gemm tune --co-dir`. The way every kernel experiment of docs/PERF.md since entry 29 was
# timed against the shipped kernels in one process. The logs feed scripts/measured_table.py and
# scripts/merge_tuned.py.
# Usage: scripts/tune_subset.sh REGEX OUT.log [f4gemm tune arguments: --shape MxNxK ... --reps 3 --iters 10 ...]
# (the tuned CSV goes to OUT.csv beside the log unless the arguments name --out)
#        scripts/tune_subset.sh --make DIR REGEX   only writes the restricted manifest directory DIR (emptied first),
#        the code objects copied rather than linked, so that a device call can carry it (the abtest/ folders of
#        docs/results/*/prep*.sh)
# Example: scripts/tune_subset.sh 'f4gemm_sm90a_dec_16x64_m2|f4gemm_sm90a_ws_swap_32x128_fs' t.log \
#              --shape 32x4096x4096 --no-verify --reps 3 --iters 10
set -euo pipefail
cd "$(dirname "$0")/.."
make_dir=
if [ "${1:-}" = --make ]; then
    if [ $# -ne 3 ]; then
        echo "tune_subset.sh: usage: scripts/tune_subset.sh --make DIR REGEX: pass the folder to write and a kernel-name regex" >&2
        exit 2
    fi
    make_dir=$2 regex=$3
else
    if [ $# -lt 3 ]; then
        echo "tune_subset.sh: usage: scripts/tune_subset.sh REGEX OUT.log --shape MxNxK [...]: pass a kernel-name regex, a log path and the tune arguments" >&2
        exit 2
    fi
    regex=$1 log=$2
    shift 2
fi
S=build/kernels/sm90a D=build/kernels/sm90a/dev
[ -f "$S/f4gemm_bf16_per1x32Fp4.csv" ] || { echo "tune_subset.sh: no manifest in $S: build first (scripts/build.sh)" >&2; exit 2; }
if [ -n "$make_dir" ]; then
    rm -rf "$make_dir" && mkdir -p "$make_dir"
    dir=$make_dir
else
    dir=$(mktemp -d "${TMPDIR:-/tmp}/f4gemm_subset.XXXXXX")
fi
head -1 "$S/f4gemm_bf16_per1x32Fp4.csv" > "$dir/f4gemm_bf16_per1x32Fp4.csv"
# The matching rows of each manifest, and each row's code object from the folder whose manifest lists it (a kernel
# moved from the dev ladder to the shipped manifest may leave a stale cubin in the dev folder of an older build: it
# must not be timed). knl_name is column 5 of the manifest, co_name column 6.
for d in "$S" "$D"; do
    [ -f "$d/f4gemm_bf16_per1x32Fp4.csv" ] || continue
    matched=$(tail -n +2 "$d/f4gemm_bf16_per1x32Fp4.csv" | awk -F, -v re="^($regex)\$" '$5 ~ re')
    [ -n "$matched" ] || continue
    printf '%s\n' "$matched" >> "$dir/f4gemm_bf16_per1x32Fp4.csv"
    for co in $(printf '%s\n' "$matched" | cut -d, -f6); do
        if [ -n "$make_dir" ]; then cp -f "$d/$co" "$dir/"; else ln -sf "$PWD/$d/$co" "$dir/"; fi
    done
done
rows=$(($(wc -l < "$dir/f4gemm_bf16_per1x32Fp4.csv") - 1))
if [ "$rows" -eq 0 ]; then
    [ -z "$make_dir" ] || rm -rf "$make_dir"  # no half-made folder
    echo "tune_subset.sh: no manifest row matches '$regex': see build/cli/f4gemm --list (and $D) for the names" >&2
    exit 2
fi
echo "tune_subset.sh: $rows kernels in $dir" >&2
[ -z "$make_dir" ] || exit 0
out=()
[[ " $* " == *" --out "* ]] || out=(--out "${log%.*}.csv")
if ! build/cli/f4gemm tune --co-dir "$dir" "${out[@]}" "$@" > "$log" 2>&1; then
    tail -3 "$log" >&2
    exit 1
fi
grep " best " "$log" || true
