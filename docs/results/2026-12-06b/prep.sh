#!/usr/bin/env bash
# session 36: abtest/pp, a manifest of the two sm90pp1 kernels (copies of build/'s cubins and their manifest rows),
# which callS.sh times in and out of N slabs (F4GEMM_PP_SLAB_N, PERF.md entry 79)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/pp && mkdir -p abtest/pp
M=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv
(head -1 $M; grep -E "f4gemm_sm90a_pp_128x128(_p)?\.cubin" $M) > abtest/pp/f4gemm_bf16_per1x32Fp4.csv
tail -n +2 abtest/pp/f4gemm_bf16_per1x32Fp4.csv | cut -d, -f6 | while read -r c; do cp "build/kernels/sm90a/$c" abtest/pp/; done
build/cli/f4gemm --co-dir abtest/pp --list | head -1
