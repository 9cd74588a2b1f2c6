#!/usr/bin/env bash
# session 38: abtest/dt, the two unsplit decode picks built with DEC_PROBE_TS 1 (timestamps in D; lab, wrong results
# by design), which callF.sh runs once per shape and scripts/dec_timeline.py reads (PERF.md entry 85)
set -euo pipefail
cd "$(dirname "$0")/../../.."
rm -rf abtest/dt
for k in dec_16x80_w12 dec_16x128_wg12; do
  python3 scripts/variant.py --define F4GEMM_DEC_PROBE_TS=1 abtest/dt f4gemm_sm90a_$k ts | tail -1
done
