#!/usr/bin/env bash
# session 33 call 2 (for the next session with a device; carry ["build"]): the gpu-labelled tests (the four K_STAGE
# 256 dev configs among the dev ladder's), then the serving grid with the untuned column (session 33's time model,
# PERF.md entry 76) and the clock log (bench.py --clocks), one process; logs packed after each stage
set -u
source scripts/devcall.sh; devcall_init
pack() { devcall_pack; }
timeout 280 ctest --test-dir build -L gpu --output-on-failure > $O/logs/gpu_tests.log 2>&1; echo "gpu tests rc $?"
grep -E 'tests passed|tests failed' $O/logs/gpu_tests.log
pack
timeout 280 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; tail -4 $O/logs/bench_serving.log
pack
