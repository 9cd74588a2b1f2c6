#!/usr/bin/env bash
# session 37: abtest/wv, a manifest of the 128-row A pre-pass and converter tiles (copies of build/'s cubins), which
# callW.sh times on grid cells and on their one-wave column slabs
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/wv && mkdir -p abtest/wv
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
(head -1 $M; grep -E "f4gemm_sm90a_(pab_128x128|cv_128x80)(_p)?\.cubin" $M) > abtest/wv/f4gemm_bf16_per1x32Fp4.csv
tail -n +2 abtest/wv/f4gemm_bf16_per1x32Fp4.csv | cut -d, -f6 | while read -r c; do cp "build/kernels/sm90a/$c" abtest/wv/; done
build/cli/f4gemm --co-dir abtest/wv --list | head -1
