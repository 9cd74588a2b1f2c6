#!/usr/bin/env bash
# session 41 call A (carry ["build"]), for an H200 only (session 40's call E, never run, plus an ncu step): the
# serving grid on main's build (both modes, untuned column, read floor, clock log: the issues' table), then call B's
# steps on the H200 (ncu's issue and instruction counts of the two M <= 16 picks; the GPU tests)
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
devcall_grid 290
bash docs/results/2026-12-06g/callB.sh
