#!/usr/bin/env bash
# session 39 (for call B): abtest/sk, the shipped decode picks beside the stream-K builds (DEC_SK 1,
# PERF.md entry 88) and session 38's dec_16x80_w8 (entry 87)
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/tune_subset.sh --make abtest/sk \
    'f4gemm_sm90a_dec_(16x128_wg12|16x128_wg12_s|16x128_wg12_sk|32x128_wg12_c2|32x128_wg12_c2_s|32x128_wg12_c2_sk|16x80_w12|16x80_w8|16x112_w8)$'
