#!/usr/bin/env bash
# session 38: abtest/dk, the shipped decode picks of the grid's worst M <= 32 cells (copies of build/'s cubins and
# manifest rows), which callE.sh times over K beside the read floor
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/dk && mkdir -p abtest/dk
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
(head -1 $M; grep -E ",f4gemm_sm90a_(dec_16x128_wg12|dec_16x80_w12|dec_32x128_wg12_c2)\.cubin," $M) \
    > abtest/dk/f4gemm_bf16_per1x32Fp4.csv
tail -n +2 abtest/dk/f4gemm_bf16_per1x32Fp4.csv | cut -d, -f6 | while read -r c; do cp "build/kernels/sm90a/$c" abtest/dk/; done
build/cli/f4gemm --co-dir abtest/dk --list | tail -n +2 | awk '{print $5}'
