#!/usr/bin/env bash
# session 34: abtest/s34, a manifest of the eight cv kernels shipped with 256-K stages (copies of build/'s cubins and
# their manifest rows), which call2.sh re-times on the measured tables' cells
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/s34 && mkdir -p abtest/s34
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
(head -1 $M; grep -E "f4gemm_sm90a_cv_(64x80_p|64x80|64x128_p|64x128|64x64_p|128x80_p|128x80|128x64)\.cubin" $M) \
    > abtest/s34/f4gemm_bf16_per1x32Fp4.csv
tail -n +2 abtest/s34/f4gemm_bf16_per1x32Fp4.csv | cut -d, -f6 | while read -r c; do cp "build/kernels/sm90a/$c" abtest/s34/; done
build/cli/f4gemm --co-dir abtest/s34 --list | head -1
