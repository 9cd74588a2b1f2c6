#!/usr/bin/env bash
# session 37 call G (carry ["build", "abtest"]), for an H200 only: call F's stages there (the slab gpu test, entry
# 80's rule against no slabs on ten promoted cells, two rounds, then the serving grid on this build)
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
bash docs/results/2026-12-06c/callF.sh
