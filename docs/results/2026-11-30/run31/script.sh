set -u
bash scripts/device_check.sh main tests sweep 2>&1 | grep -vE "^\[f4gemm\]" | tail -8
for s in "1 16384 16384" "8 4096 11008" "16 8192 8192"; do set -- $s; build/cli/f4gemm --tuned /dev/null -m $1 -n $2 -k $3 2>&1 | grep -E "shape|PASS|FAIL"; done
