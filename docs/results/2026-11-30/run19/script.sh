set -u
# The build with the max_m column and the new row order (kernels byte-identical to run18's).
bash scripts/device_check.sh main tests sweep 2>&1 | grep -vE "^\[f4gemm\]" | grep -E "passed|failed|PASSED|FAILED|H200" | head -20
tail -2 $OUT/main.log
for s in "128 16384 16384" "200 8192 8192" "300 28672 8192"; do set -- $s; echo "$* $(build/cli/f4gemm --tuned /dev/null -m $1 -n $2 -k $3 --iters 20 2>&1 | grep -E 'kernel|PASSED|FAILED| us ' | sed 's/\[f4gemm\]//' | tr '\n' ' ' | cut -c1-400)"; done
