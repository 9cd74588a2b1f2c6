#!/usr/bin/env bash
# session 38: abtest/c2, a manifest of the shipped promoted pp kernel and its CLUSTER_M 2 twin (dev ladder), copies
# of build/'s cubins and manifest rows, which callA.sh verifies and times (PERF.md entry 82)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/c2 && mkdir -p abtest/c2
S=build/kernels/sm90a/f4gemm_bf16_per1x32Fp4.csv D=build/kernels/sm90a/dev/f4gemm_bf16_per1x32Fp4.csv
(head -1 $S; grep -E ",f4gemm_sm90a_pp_128x128_p\.cubin," $S; grep -E ",f4gemm_sm90a_pp_128x128_p_c2\.cubin," $D) \
    > abtest/c2/f4gemm_bf16_per1x32Fp4.csv
cp build/kernels/sm90a/f4gemm_sm90a_pp_128x128_p.cubin build/kernels/sm90a/dev/f4gemm_sm90a_pp_128x128_p_c2.cubin abtest/c2/
build/cli/f4gemm --co-dir abtest/c2 --list | head -3
