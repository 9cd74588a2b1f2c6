#!/usr/bin/env bash
# session 38 call J (carry ["build"]), for an H200 only: the serving grid on this session's main, both modes, with the
# untuned column and the clock log (bench.py --grid serving --untuned --clocks, one process), the issues' H200 table
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
timeout 260 python3 bench/bench.py --grid serving --untuned --clocks --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $? $SECONDS s"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
rm -f $O/logs/bench/bench.png; devcall_pack
