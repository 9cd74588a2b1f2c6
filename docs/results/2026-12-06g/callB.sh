#!/usr/bin/env bash
# session 41 call B (carry ["build"]), any card (meant for an H100 when no H200 comes): call A's ncu step (the two
# M <= 16 picks' instructions, issue-slot use and DRAM throughput) and the GPU tests on main's build
set -u
source scripts/devcall.sh; devcall_init
for c in "dec_16x128_wg12 1 16384 16384" "dec_16x128_wg12 16 16384 16384" "dec_16x80_w12 1 10240 8192" \
         "dec_16x80_w12 16 10240 8192"; do
  set -- $c
  timeout 40 ncu --cache-control none --clock-control none --csv --launch-skip 2 --launch-count 1 \
      --kernel-name regex:"$1\$" --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg,sm__cycles_elapsed.avg.per_second,sm__inst_executed.sum,sm__inst_issued.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,launch__grid_size \
      build/cli/f4gemm --backend cuda --kernel f4gemm_sm90a_$1.cubin -m $2 -n $3 -k $4 --warmup 0 --iters 4 --no-verify \
      > $O/logs/ncu_$1_m$2.csv 2> $O/logs/ncu_$1_m$2.err
  echo "ncu $1 m$2 rc $? $SECONDS s"
done
devcall_pack
(cd build && timeout 200 ctest -L gpu --output-on-failure > $O/logs/ctest_gpu.log 2>&1); echo "ctest rc $? $SECONDS s"
tail -3 $O/logs/ctest_gpu.log; devcall_pack
