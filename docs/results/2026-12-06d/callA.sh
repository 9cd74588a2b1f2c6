#!/usr/bin/env bash
# session 38 call A (carry ["build", "abtest"]; run docs/results/2026-12-06d/prep.sh first), any card: the promoted
# pp GEMM in clusters of two tile rows that share B's stage by TMA multicast (pp_128x128_p_c2, PERF.md entry 82):
# (1) verified against the float64 judge on four data kinds and three shapes, and an odd tiles_m launch (expected
# to fail cleanly); (2) timed against pp_128x128_p in one process per round, with the slab rule and without slabs,
# two alternating rounds; (3) ncu SpeedOfLight + MemoryWorkloadAnalysis of both GEMMs at 1024 x 16384^2 unslabbed
set -u
source scripts/devcall.sh; devcall_init
C2=f4gemm_sm90a_pp_128x128_p_c2.cubin
for d in seed gaussian wide nan; do for s in "256 2048 4096" "1024 1000 2816" "512 512 8192"; do
  set -- $s
  timeout 60 build/cli/f4gemm --backend cuda --co-dir abtest/c2 --kernel $C2 --accum promoted --data $d \
      -m $1 -n $2 -k $3 --iters 0 --warmup 0 > $O/logs/v_${d}_$1x$2x$3.log 2>&1
  echo "verify $d $1x$2x$3 rc $? $(grep -h -E "PASSED|FAILED" $O/logs/v_${d}_$1x$2x$3.log)"
done; done
timeout 60 build/cli/f4gemm --backend cuda --co-dir abtest/c2 --kernel $C2 --accum promoted -m 384 -n 1024 -k 1024 \
    --iters 0 --warmup 0 > $O/logs/v_odd.log 2>&1; echo "odd tiles_m rc $?: $(tail -1 $O/logs/v_odd.log)"
devcall_pack
S=""; for x in 512x16384x16384 1024x16384x16384 768x28672x8192 2048x10240x8192 4096x16384x16384 1024x8192x28672 \
    256x16384x16384; do S="$S --shape $x"; done
for r in 1 2; do for w in rule 0; do
  if [ $w = rule ]; then unset F4GEMM_PP_SLAB_N; else export F4GEMM_PP_SLAB_N=0; fi
  timeout 90 build/cli/f4gemm tune --co-dir abtest/c2 $S --accum promoted --no-verify --reps 3 --iters 10 \
      --out $O/logs/t_${w}_r$r.csv > $O/logs/t_${w}_r$r.log 2>&1; echo "r$r $w rc $? $SECONDS s"; devcall_pack
done; done; unset F4GEMM_PP_SLAB_N
for k in f4gemm_sm90a_pp_128x128_p $C2; do
  F4GEMM_PP_SLAB_N=0 timeout 100 ncu --cache-control none --clock-control none --csv \
      --kernel-name regex:'pp_128x128_p(_c2)?$' --section SpeedOfLight --section MemoryWorkloadAnalysis \
      build/cli/f4gemm --backend cuda --co-dir abtest/c2 --kernel ${k%.cubin}.cubin --accum promoted \
      -m 1024 -n 16384 -k 16384 --iters 0 --warmup 0 --no-verify > $O/logs/ncu_${k%.cubin}.csv 2> $O/logs/ncu_${k%.cubin}.err
  echo "ncu $k rc $? $SECONDS s"; devcall_pack
done
