#!/usr/bin/env bash
# session 37 call V (carry ["build"]), any card: the gpu-labelled tests on the session's final build
set -u
source scripts/devcall.sh; devcall_init
timeout 170 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1; echo "gpu tests rc $?"
grep -E 'tests passed|tests failed|\(Failed\)|Total Test time' $O/logs/gpu_tests.log
devcall_pack
