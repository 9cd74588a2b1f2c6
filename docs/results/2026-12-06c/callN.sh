#!/usr/bin/env bash
# session 37 call N (carry ["build"]), any card: why the exact pp kernel gains nothing from N slabs (entry 79): each
# kernel's own duration and DRAM bytes under ncu (no cache flush between kernels, so a slab's GEMM finds its image where
# its pre-pass left it; clocks not locked), both pp kernels at 1024 x 16384^2, unslabbed and in slabs of 2048
set -u
source scripts/devcall.sh; devcall_init
for a in exact promoted; do for w in 0 2048; do
  k=f4gemm_sm90a_pp_128x128$([ $a = promoted ] && echo _p).cubin
  F4GEMM_PP_SLAB_N=$w timeout 100 ncu --cache-control none --clock-control none --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed \
      build/cli/f4gemm --backend cuda --kernel $k --accum $a -m 1024 -n 16384 -k 16384 --iters 0 --warmup 0 --no-verify \
      > $O/logs/ncu_${a}_w$w.csv 2> $O/logs/ncu_${a}_w$w.err; echo "$a w$w rc $? $SECONDS s"; devcall_pack
done; done
