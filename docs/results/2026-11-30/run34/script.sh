#!/usr/bin/env bash
# run34 (device): the build with graph timing in tune and the read floor: gpu tests (incl. the graph replay and
# readfloor --check tests), the regression sweep, the main job, then tune on the decode and mid-M shapes with
# --timing graph and --timing loop (same kernels, shipped manifest) to compare the two methods.
set -u
cd "$(dirname "$0")/../../../.."
bash scripts/device_check.sh main tests sweep
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672 --shape 128x16384x16384 --shape 256x16384x16384"
for t in graph loop; do
  echo "== tune --timing $t"
  build/cli/f4gemm tune $S --timing $t --no-verify --reps 5 --iters 50 --out $OUT/tune_$t.csv > $OUT/tune_$t.log 2>&1; echo rc=$?
  grep -E "^\[f4gemm\] (tuning|best)" $OUT/tune_$t.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/; operand.*//"
done
