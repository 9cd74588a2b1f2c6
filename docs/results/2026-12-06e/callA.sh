#!/usr/bin/env bash
# session 39 call A (carry ["build", "abtest"]; 2026-12-06d/prepK.sh first): on an H200 the serving grid first
# (2026-12-06d/callJ.sh), then on any card session 38's call K (dec_16x80_w8 against dec_16x80_w12, PERF.md entry 87)
set -u
bash docs/results/2026-12-06d/callJ.sh
mkdir -p ${OUT:-/tmp/out}/logs && mv ${OUT:-/tmp/out}/logs.tgz ${OUT:-/tmp/out}/grid.tgz 2>/dev/null
bash docs/results/2026-12-06d/callK.sh
