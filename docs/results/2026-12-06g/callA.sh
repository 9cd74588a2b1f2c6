#!/usr/bin/env bash
# session 41 call A (was session 40 call E, never run) (carry ["build"]), for an H200 only: the serving grid on main's final build (both modes, untuned
# column, read floor, clock log: the issues' table), then the GPU tests on the H200
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
devcall_grid 290
(cd build && timeout 200 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -3 $O/logs/ctest_gpu.log; devcall_pack
