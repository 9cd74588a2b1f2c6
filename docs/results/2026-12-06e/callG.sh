#!/usr/bin/env bash
# session 39 call G (carry ["build"]), any card: the GPU tests on this session's build (the decode kernels rebuilt
# around dec_tile, the stream-K dev builds and their test), then compute-sanitizer on the decode kernels
set -u
source scripts/devcall.sh; devcall_init
(cd build && timeout 300 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -4 $O/logs/ctest_gpu.log
F4GEMM_SANITIZE_ONLY='dec_' timeout 240 bash scripts/sanitize_sm90.sh > $O/logs/sanitize.log 2>&1
echo "sanitize rc $? $SECONDS s"; grep -E 'ERROR SUMMARY|errors' $O/logs/sanitize.log | sort | uniq -c | head
devcall_pack
