#!/usr/bin/env bash
# session 38 (for a later session's device call): abtest/w8, the 80-row decode tile with 12 warps (shipped) and with
# 8 warps and 3 stages (dev, `dec_16x80_w8`, PERF.md entry 87), beside their DEC_PROBE_TS builds in abtest/w8ts
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/tune_subset.sh --make abtest/w8 'f4gemm_sm90a_dec_16x80_w(12|8)'
rm -rf abtest/w8ts
for k in dec_16x80_w12 dec_16x80_w8; do
  python3 scripts/variant.py --define F4GEMM_DEC_PROBE_TS=1 abtest/w8ts f4gemm_sm90a_$k ts | tail -1
done
