#!/usr/bin/env bash
# session 34 call 3 (carry ["build"]): the regression sweep (both modes), then the serving grid with the untuned
# column and the clock log (bench.py --grid serving --untuned --clocks), one process
set -u
source scripts/devcall.sh; devcall_init
timeout 200 bash scripts/sweep_sm90.sh > $O/logs/sweep.log 2>&1; echo "sweep rc $?"; tail -2 $O/logs/sweep.log
devcall_pack
timeout 330 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; tail -6 $O/logs/bench_serving.log
devcall_pack
