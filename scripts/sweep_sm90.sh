#!/usr/bin/env bash
# Regression sweep of our sm_90a kernels on an NVIDIA GPU: asm_f4gemm's run_tests.sh adapted.
# The 8 heuristic shapes, every kernel of the manifest at M=300 N=2048 K=1024, every 16-row kernel at M=3 and 8
# (the loops that serve M <= 8), split-K at
# M=256 N=1024 K=4096 for every split-capable kernel and split, then M=1, N not a multiple of
# the tile, K=256, and beta != 0 with C. Judged by exit status (the original grepped "PASSED").
# Usage: scripts/sweep_sm90.sh [--co-dir DIR] [-- extra f4gemm flags]
set -u
cd "$(dirname "$0")/.."
BACKEND=cuda
source scripts/sweep_common.sh "$@"

echo "== heuristic kernel selection over a shape sweep =="
for s in "${HEURISTIC_SHAPES[@]}"; do
    set -- $s
    check "M=$1 N=$2 K=$3" -m "$1" -n "$2" -k "$3"
done

echo "== every kernel in the manifest (M=300 N=2048 K=1024) =="
# Each kernel runs in the accumulation mode it implements (--list's sixth column; exact when absent).
mapfile -t KERNELS < <("$F4GEMM" "${CO[@]}" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $5}')
mapfile -t MODES < <("$F4GEMM" "${CO[@]}" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print ($6 == "" ? "exact" : $6)}')
mapfile -t SPLITK < <("$F4GEMM" "${CO[@]}" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $3}')
mapfile -t TILEM < <("$F4GEMM" "${CO[@]}" --list | awk '$5 ~ /\.(cubin|ptx)$/ {print $1}')
for i in "${!KERNELS[@]}"; do
    k=${KERNELS[$i]}
    check "$k (${MODES[$i]})" --kernel "$k" --accum "${MODES[$i]}" -m 300 -n 2048 -k 1024
done

echo "== decode rows on every 16-row kernel (M <= 8: the loops that serve them, DEC_PIPE's among them) =="
# K = 2048 and 3072 (2880 padded) give every warpgroup of the wgmma decode tiles whole slots of two chunks.
for i in "${!KERNELS[@]}"; do
    [ "${TILEM[$i]}" = 16 ] || continue
    k=${KERNELS[$i]}
    check "$k M=3 N=2064 K=2048 (${MODES[$i]})" --kernel "$k" --accum "${MODES[$i]}" -m 3 -n 2064 -k 2048
    check "$k M=8 N=1000 K=2880 beta=0.5 (${MODES[$i]})" --kernel "$k" --accum "${MODES[$i]}" -m 8 -n 1000 -k 2880 --beta 0.5
done
echo "== split-K, fp32 reduction (M=256 N=1024 K=4096) =="
for i in "${!KERNELS[@]}"; do
    [ "${SPLITK[$i]}" = 1 ] || continue
    k=${KERNELS[$i]}
    for l in 1 2 3 4; do
        check "$k --splitk $l (${MODES[$i]})" --kernel "$k" --accum "${MODES[$i]}" --splitk "$l" -m 256 -n 1024 -k 4096
    done
done

echo "== edges =="
check "M=1 N=8192 K=8192" -m 1 -n 8192 -k 8192
check "M=16 N=16384 K=2048" -m 16 -n 16384 -k 2048
check "N=2064 (not a multiple of any tile)" -m 300 -n 2064 -k 1024
check "N=16" -m 64 -n 16 -k 512
check "K=256" -m 512 -n 1024 -k 256
check "beta=0.5 alpha=2 with C" -m 300 -n 2048 -k 1024 --alpha 2 --beta 0.5
check "NaN scales" -m 96 -n 256 -k 512 --data nan
check "wide-scale data" -m 128 -n 512 -k 2048 --data wide
check "--splitk -1 heuristic" -m 256 -n 1024 -k 8192 --splitk -1
echo "== any model's shapes (the packed weight pads N and K) =="
check "gpt-oss M=16 N=K=2880" -m 16 -n 2880 -k 2880
check "N=1000 K=2880" -m 1 -n 1000 -k 2880
check "M=300 N=2880 K=2880" -m 300 -n 2880 -k 2880
check "M=1024 N=201 K=1056" -m 1024 -n 201 -k 1056
for i in "${!KERNELS[@]}"; do
    k=${KERNELS[$i]}
    check "$k K=2880" --kernel "$k" --accum "${MODES[$i]}" -m 40 -n 1000 -k 2880
    check "$k M=130 N=1000 K=2880" --kernel "$k" --accum "${MODES[$i]}" -m 130 -n 1000 -k 2880
done

echo "== the promoted mode (judged by its bound, docs/VERIFY.md) through the policy =="
for s in "${HEURISTIC_SHAPES[@]}"; do
    set -- $s
    check "promoted M=$1 N=$2 K=$3" --accum promoted -m "$1" -n "$2" -k "$3"
done
check "promoted beta=0.5 alpha=2 with C" --accum promoted -m 300 -n 2048 -k 1024 --alpha 2 --beta 0.5
check "promoted NaN scales" --accum promoted -m 256 -n 256 -k 512 --data nan
check "promoted wide-scale data" --accum promoted -m 256 -n 512 -k 2048 --data wide
check "promoted gaussian M=1024 N=2880 K=2880" --accum promoted -m 1024 -n 2880 -k 2880 --data gaussian
check "promoted M=2048 N=201 K=1056" --accum promoted -m 2048 -n 201 -k 1056

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
