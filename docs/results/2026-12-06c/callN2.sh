#!/usr/bin/env bash
# session 37 call N2 (carry ["build"]), any card, after call N: is the promoted pp GEMM's gain in slabs a clock
# effect of ncu's serialized short kernels? Its clock, L2 hit rate and instructions at unlocked clocks, and its
# duration with clocks locked to base (ncu --clock-control base), unslabbed and in slabs of 2048, 1024 x 16384^2
set -u
source scripts/devcall.sh; devcall_init
for cc in none base; do for w in 0 2048; do
  F4GEMM_PP_SLAB_N=$w timeout 100 ncu --cache-control none --clock-control $cc --csv \
      --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,lts__t_sector_hit_rate.pct,sm__inst_executed.sum,dram__bytes_read.sum \
      build/cli/f4gemm --backend cuda --kernel f4gemm_sm90a_pp_128x128_p.cubin --accum promoted -m 1024 -n 16384 -k 16384 \
      --iters 0 --warmup 0 --no-verify > $O/logs/ncu2_${cc}_w$w.csv 2> $O/logs/ncu2_${cc}_w$w.err
  echo "$cc w$w rc $? $SECONDS s"; devcall_pack
done; done
