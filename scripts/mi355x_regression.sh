#!/usr/bin/env bash
# asm_f4gemm's run_tests.sh (51 checks) for an MI355X, run through `f4gemm --backend hip` against
# aiter's gfx950 code objects: the 8 heuristic shapes, all 35 manifest kernels forced at
# M=300 N=2048 K=1024 (--bpreshuffle 0 for noBpreShuffle), and 256x256 / 128x512 at --splitk 1..4
# with M=256 N=1024 K=4096. Judged by exit status (the original grepped the output for "PASSED").
# Not yet run on AMD hardware (none was available where it was written): see docs/HIP.md.
#
# Usage: scripts/mi355x_regression.sh [--co-dir DIR] [-- extra f4gemm flags]
#   DIR defaults to what f4gemm itself uses: $AITER_F4GEMM_DIR, else $AITER_ASM_DIR/gfx950/f4gemm.
#   The binary is $F4GEMM, else build/cli/f4gemm.
set -u
cd "$(dirname "$0")/.."
BACKEND=hip
source scripts/sweep_common.sh "$@"

echo "== heuristic kernel selection over a shape sweep =="
for s in "${HEURISTIC_SHAPES[@]}"; do
    set -- $s
    check "heuristic M=$1 N=$2 K=$3" -m "$1" -n "$2" -k "$3"
done

echo "== every kernel in the manifest (M=300 N=2048 K=1024) =="
mapfile -t KERNELS < <("$F4GEMM" "${CO[@]}" --list 2>&1 | awk '$NF ~ /\.co$/ {print $NF}')
if [ "${#KERNELS[@]}" -ne 35 ]; then
    fail=$((fail + 1))
    echo "  FAIL --list shows ${#KERNELS[@]} .co kernels, aiter's gfx950 manifest has 35:"
    "$F4GEMM" "${CO[@]}" --list 2>&1 | sed 's/^/       /'
fi
for co in "${KERNELS[@]}"; do
    bps=1
    [[ "$co" == *noBpreShuffle* ]] && bps=0
    check "$co" -m 300 -n 2048 -k 1024 --kernel "$co" --bpreshuffle "$bps"
done

echo "== splitK (bf16 atomic accumulate) =="
for co in f4gemm_bf16_per1x32Fp4_BpreShuffle_256x256.co f4gemm_bf16_per1x32Fp4_BpreShuffle_128x512.co; do
    for s in 1 2 3 4; do
        check "$co splitk=$s" -m 256 -n 1024 -k 4096 --kernel "$co" --splitk "$s"
    done
done

echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
