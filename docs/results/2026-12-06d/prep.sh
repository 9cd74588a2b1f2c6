#!/usr/bin/env bash
# session 38: abtest/c2, the shipped promoted pp kernel and its CLUSTER_M 2 twin (dev ladder: apply cluster_m.diff and
# rebuild first), which callA.sh verifies and times (PERF.md entry 82)
set -euo pipefail
cd "$(dirname "$0")/../../.."
scripts/tune_subset.sh --make abtest/c2 'f4gemm_sm90a_pp_128x128_p(_c2)?'
