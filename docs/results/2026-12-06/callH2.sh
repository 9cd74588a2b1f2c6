#!/usr/bin/env bash
# session 35 call H2 (carry ["build"]), for an H200 only, when too little device time is left for callH.sh: the
# serving grid alone, both modes, with the untuned column (bench.py --grid serving --untuned, one process)
set -u
source scripts/devcall.sh; devcall_init
grep -q H200 $O/logs/gpu.txt || { echo "not an H200: nothing run"; exit 0; }
timeout 150 python3 bench/bench.py --grid serving --untuned --out $O/logs/bench > $O/logs/bench_serving.log 2>&1
echo "bench rc $?"; sed -n '/^f4gemm accum/p' $O/logs/bench_serving.log
devcall_pack
