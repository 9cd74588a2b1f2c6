#!/usr/bin/env bash
# session 40 call F (carry ["build"]), any card: the GPU tests on main's final build
set -u
source scripts/devcall.sh; devcall_init
(cd build && timeout 200 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -3 $O/logs/ctest_gpu.log; devcall_pack
