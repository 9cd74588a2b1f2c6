#!/usr/bin/env bash
# session 38: abtest/dk, the shipped decode picks of the grid's worst M <= 32 cells, which callE.sh times over K
# beside the read floor
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/tune_subset.sh --make abtest/dk 'f4gemm_sm90a_(dec_16x128_wg12|dec_16x80_w12|dec_32x128_wg12_c2)'
