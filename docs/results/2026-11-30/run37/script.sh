#!/usr/bin/env bash
# run37 (device): the build with dec_16x64_w12: main job, gpu tests, sweep, compute-sanitizer on the new kernel,
# then graph-timed tune of the decode shapes and their neighbours for the tuned table.
set -u
cd "$(dirname "$0")/../../../.."
bash scripts/device_check.sh main tests sweep
echo "=== compute-sanitizer, dec_16x64_w12"
K=f4gemm_sm90a_dec_16x64_w12.cubin
for args in "memcheck -m 65 -n 272 -k 512" "memcheck -m 17 -n 16 -k 256 --beta 1" "memcheck -m 1 -n 1024 -k 256" \
            "memcheck -m 16 -n 8192 -k 8192" "racecheck -m 65 -n 272 -k 512" "racecheck -m 16 -n 1024 -k 3072"; do
  set -- $args; tool=$1; shift
  out=$(compute-sanitizer --tool $tool --error-exitcode 99 build/cli/f4gemm --backend cuda --iters 0 --kernel $K "$@" 2>&1); r=$?
  printf '%-9s %-40s rc=%d %s %s\n' $tool "$*" $r "$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' <<<"$out" | tail -1)" "$(grep -oE 'PASSED|FAILED' <<<"$out" | tail -1)"
done | tee $OUT/sanitize_w12.log
S="--shape 1x16384x16384 --shape 1x8192x8192 --shape 1x28672x8192 --shape 1x8192x28672 --shape 16x16384x16384 --shape 16x8192x8192 --shape 16x28672x8192 --shape 16x8192x28672 --shape 32x8192x8192 --shape 32x8192x28672 --shape 32x16384x16384 --shape 32x28672x8192"
echo "=== tune (graph)"
build/cli/f4gemm tune $S --no-verify --reps 7 --iters 50 --out $OUT/tune_dec.csv > $OUT/tune_dec.log 2>&1; echo rc=$?
grep -E "^\[f4gemm\] best" $OUT/tune_dec.log | sed -E "s/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//; s/; operand.*//"
for s in 1x8192x8192 16x8192x8192 16x8192x28672 1x8192x28672; do grep " $s .*dec_16x64_w1[26]" $OUT/tune_dec.log | sed -E 's/\[f4gemm\] +//; s/f4gemm_sm90a_//; s/.cubin//' | awk '{print $1,$2,$5}'; done
