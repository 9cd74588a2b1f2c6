#!/usr/bin/env bash
# session 35 call A (carry ["build"]): the gpu-labelled tests on the build with session 34's eight 256-K cv kernels;
# then on an H200 the serving grid, both modes, with the untuned column and the clock log (bench.py --grid serving
# --untuned --clocks, one process), on any other card compute-sanitizer on the eight and the regression sweep
set -u
source scripts/devcall.sh; devcall_init
timeout 170 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1; echo "gpu tests rc $?"
grep -E 'tests passed|tests failed|\(Failed\)|Total Test time' $O/logs/gpu_tests.log
devcall_pack
if grep -q H200 $O/logs/gpu.txt; then
timeout 400 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; tail -4 $O/logs/bench_serving.log | cut -c1-160
else
F4GEMM_SANITIZE_ONLY='cv_(64x80_p|64x80|64x128_p|64x128|64x64_p|128x80_p|128x80|128x64)\.cubin' timeout 170 \
    bash scripts/sanitize_sm90.sh > $O/logs/sanitize.log 2>&1; echo "sanitize rc $?"
grep -c 'rc=0' $O/logs/sanitize.log; grep -v 'rc=0' $O/logs/sanitize.log | head -5
devcall_pack
timeout 200 bash scripts/sweep_sm90.sh > $O/logs/sweep.log 2>&1; echo "sweep rc $?"; tail -2 $O/logs/sweep.log
fi
devcall_pack
