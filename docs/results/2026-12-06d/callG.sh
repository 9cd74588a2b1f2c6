#!/usr/bin/env bash
# session 38 call G (carry ["build", "abtest"]; prepF.sh first, on the five-point probe's source, 69ffe4a), any card:
# call F's cells again with the probe's five points (PERF.md entry 85), the logs named p_* instead of d_*
CALLF_PREFIX=p exec bash "$(dirname "$0")/callF.sh"
