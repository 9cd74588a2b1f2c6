#!/usr/bin/env bash
# session 38 call C (carry ["build", "abtest"]; run docs/results/2026-12-06d/prepC.sh first), any card: the converter
# tiles with A's image stage multicast over clusters of 2 or 4 CTAs (CLUSTER_N, PERF.md entry 83): (1) each
# cluster variant verified against the float64 judge (seed, Gaussian, wide, NaN data) on shapes whose tiles_n divide
# by 4; (2) timed against the shipped picks (f4gemm tune, one process per run, two alternating rounds)
set -u
source scripts/devcall.sh; devcall_init
v() {  # dir kernel accum data M N K
  timeout 60 build/cli/f4gemm --backend cuda --co-dir abtest/$1 --kernel $2.cubin --accum $3 --data $4 \
      -m $5 -n $6 -k $7 --iters 0 --warmup 0 > $O/logs/v_$2_$4_$5x$6x$7.log 2>&1
  echo "verify $2 $4 $5x$6x$7 rc $? $(grep -h -E 'PASSED|FAILED' $O/logs/v_$2_$4_$5x$6x$7.log)"
}
for c in n2 n4; do
  for d in seed gaussian wide nan; do
    v cn80 f4gemm_sm90a_cv_64x80_p_$c promoted $d 64 10240 1024
    v cn80 f4gemm_sm90a_cv_128x80_p_$c promoted $d 130 10240 2048
    v cn80 f4gemm_sm90a_cv_128x80_$c exact $d 130 10240 1024
    v cn128 f4gemm_sm90a_cv_64x128_p_$c promoted $d 100 1024 2816
    v cn128 f4gemm_sm90a_cv_128x128_p_c2$c promoted $d 200 2048 1024
  done
done
devcall_pack
for r in 1 2; do
  timeout 60 build/cli/f4gemm tune --co-dir abtest/cn80 --shape 64x10240x8192 --shape 128x10240x8192 \
      --shape 256x10240x8192 --accum promoted --no-verify --reps 3 --iters 10 --out $O/logs/t80p_r$r.csv \
      > $O/logs/t80p_r$r.log 2>&1; echo "r$r cn80 promoted rc $? $SECONDS s"
  timeout 60 build/cli/f4gemm tune --co-dir abtest/cn80 --shape 128x10240x8192 --shape 256x10240x8192 \
      --accum exact --no-verify --reps 3 --iters 10 --out $O/logs/t80e_r$r.csv \
      > $O/logs/t80e_r$r.log 2>&1; echo "r$r cn80 exact rc $? $SECONDS s"
  timeout 120 build/cli/f4gemm tune --co-dir abtest/cn128 --shape 64x16384x16384 --shape 64x28672x8192 \
      --shape 64x8192x28672 --shape 128x16384x16384 --shape 128x28672x8192 --shape 128x8192x28672 \
      --shape 256x16384x16384 --accum promoted --no-verify --reps 3 --iters 10 --out $O/logs/t128p_r$r.csv \
      > $O/logs/t128p_r$r.log 2>&1; echo "r$r cn128 promoted rc $? $SECONDS s"
  devcall_pack
done
