#!/usr/bin/env bash
# run36 (device): deeper dec rings (build_var36.sh) beside the shipped kernels, graph-timed tune, the 8 decode
# shapes and three neighbours; the variants verified on two small shapes first.
set -u
cd "$(dirname "$0")/../../../.."
bash scripts/device_check.sh none >/dev/null 2>&1
build/cli/f4gemm tune --shape 1x4096x2048 --shape 13x2048x4096 --co-dir build/var36 --reps 2 --iters 5 --out $OUT/tune_verify36.csv > $OUT/tune_verify36.log 2>&1; echo verify rc=$?
grep -c FAILED $OUT/tune_verify36.log
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672 --shape 8x4096x11008 --shape 32x8192x8192 --shape 4x14336x4096"
build/cli/f4gemm tune $S --co-dir build/var36 --no-verify --reps 7 --iters 50 --out $OUT/tune_var36.csv > $OUT/tune_var36.log 2>&1; echo rc=$?
grep -E "split 0:" $OUT/tune_var36.log | grep -v dropped | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/ split 0://; s/TF\/s.*spread/ sp/; s/ +/ /g" | awk '{print $1, $2, $3}'
