#!/usr/bin/env bash
# session 34 call 2h (carry ["build"]): call2.sh's card-independent parts, for an H100 when no H200 comes: the
# gpu-labelled tests, compute-sanitizer on the eight cv kernels rebuilt with 256-K stages, the regression sweep
set -u
source scripts/devcall.sh; devcall_init
timeout 200 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1; echo "gpu tests rc $?"
grep -E 'tests passed|tests failed|\(Failed\)' $O/logs/gpu_tests.log
devcall_pack
F4GEMM_SANITIZE_ONLY='cv_(64x80_p|64x80|64x128_p|64x128|64x64_p|128x80_p|128x80|128x64)\.cubin' timeout 170 \
    bash scripts/sanitize_sm90.sh > $O/logs/sanitize.log 2>&1; echo "sanitize rc $?"
grep -c 'rc=0' $O/logs/sanitize.log; grep -v 'rc=0' $O/logs/sanitize.log | head -5
devcall_pack
timeout 200 bash scripts/sweep_sm90.sh > $O/logs/sweep.log 2>&1; echo "sweep rc $?"; tail -2 $O/logs/sweep.log
devcall_pack
