#!/usr/bin/env bash
# run35 (device): the tuned table's other 38 shapes re-measured with graph timing (tune's new default).
set -u
cd "$(dirname "$0")/../../../.."
bash scripts/device_check.sh none >/dev/null 2>&1
build/cli/f4gemm tune --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 16384x16384x16384 --shape 2048x8192x8192 --shape 4096x28672x4096 --shape 4096x8192x28672 --shape 512x1024x2048 --shape 32x8192x8192 --shape 32x16384x16384 --shape 32x28672x8192 --shape 32x8192x28672 --shape 64x8192x8192 --shape 64x16384x16384 --shape 64x28672x8192 --shape 64x8192x28672 --shape 96x8192x8192 --shape 96x16384x16384 --shape 96x28672x8192 --shape 96x8192x28672 --shape 128x8192x8192 --shape 128x28672x8192 --shape 128x8192x28672 --shape 192x8192x8192 --shape 192x16384x16384 --shape 192x28672x8192 --shape 192x8192x28672 --shape 256x8192x8192 --shape 256x28672x8192 --shape 256x8192x28672 --shape 384x8192x8192 --shape 384x16384x16384 --shape 384x28672x8192 --shape 384x8192x28672 --shape 512x8192x8192 --shape 512x16384x16384 --shape 512x28672x8192 --shape 512x8192x28672  --no-verify --reps 5 --iters 50 --out $OUT/tune_rest.csv > $OUT/tune_rest.log 2>&1; echo rc=$?
grep -E "^\[f4gemm\] best" $OUT/tune_rest.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/; operand.*//"
