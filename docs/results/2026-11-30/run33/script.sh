#!/usr/bin/env bash
# run33 (device): the early-start dec variants against the shipped dec kernels (f4gemm tune, same call), their
# results verified on two small shapes, and the bench with the read floor on the shipped build (decode + mid M).
set -u
cd "$(dirname "$0")/../../../.."
bash scripts/device_check.sh none >/dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.limit --format=csv,noheader
echo "== verify var33 (CPU reference)"
build/cli/f4gemm tune --shape 1x4096x2048 --shape 13x2048x4096 --co-dir build/var33 --reps 2 --iters 5 --out $OUT/tune_verify33.csv > $OUT/tune_verify33.log 2>&1; echo rc=$?
grep -E "split 0:|FAIL|mismatch" $OUT/tune_verify33.log | head -20
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672 --shape 8x4096x11008"
echo "== tune var33"
build/cli/f4gemm tune $S --co-dir build/var33 --no-verify --reps 7 --iters 50 --out $OUT/tune_var33.csv > $OUT/tune_var33.log 2>&1; echo rc=$?
grep -E "split 0:" $OUT/tune_var33.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/ split 0://; s/TF\/s.*spread/ sp/; s/ +/ /g"
echo "== bench with read floor (shipped build)"
python3 bench/bench.py --out $OUT/bench_floor --shapes 1x16384x16384,1x8192x8192,1x28672x8192,1x8192x28672,16x16384x16384,16x8192x8192,16x28672x8192,16x8192x28672,128x16384x16384,256x16384x16384 2>&1 | tail -32
